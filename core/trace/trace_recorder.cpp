#include "trace/trace_recorder.h"

#include <cerrno>
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "log/logger.h"
#include "status/error.h"
#include "tidal/tidal.h"
#include "trace/trace_line.h"

namespace tidal::trace {
namespace {

std::atomic<uint64_t> next_recorder_id{1};

constexpr size_t kFlushBytes = size_t{1} << 20;

} // namespace

TraceRecorder::TraceRecorder(const std::filesystem::path &file, const std::string &where)
    : id_(next_recorder_id.fetch_add(1))
{
    file_ = std::fopen(file.c_str(), "w");
    if (!file_)
        throw Error(TIDAL_ERROR_CONFIG,
                    where + ": cannot create the trace file \"" + file.string() + "\": " + std::strerror(errno),
                    "name a file in a folder that exists and that you may write");
    std::setvbuf(file_, nullptr, _IOFBF, kFlushBytes);
    text_.reset(new char[kFlushBytes + kMaxEventLine]);
}

TraceRecorder::~TraceRecorder()
{
    stop_.store(true, std::memory_order_release);
    if (writer_.joinable())
        writer_.join();
    if (!header_written_) { // the context did not start: there is no trace to end
        std::fclose(file_);
        return;
    }
    drain();
    uint64_t waits = 0;
    for (const auto &ring : rings_)
        waits += ring->waits();
    // Said in the trace and in the log: a trace that slowed its program should not pass unseen.
    if (waits > 0)
        log_warn(fmt::format("trace: {} of {} events found their thread's ring full ({} events) and waited for the "
                             "writer; none was lost, but those calls were slowed",
                             waits, events_, TraceRing::kCapacity));
    const std::string end = end_line(events_, waits);
    std::fwrite(end.data(), 1, end.size(), file_);
    std::fclose(file_);
}

void TraceRecorder::write_header(const char *runtime, int32_t devices)
{
    const std::string line = header_line(runtime, devices, TIDAL_VERSION_STRING);
    std::fwrite(line.data(), 1, line.size(), file_);
    header_written_ = true;
    writer_ = std::thread([this] { writer_loop(); });
}

TraceRing &TraceRecorder::add_ring() noexcept
{
    // A thread seen before by this recorder (it switched contexts) gets its ring back.
    std::lock_guard lock(rings_mutex_);
    static thread_local std::vector<std::pair<uint64_t, TraceRing *>> known;
    for (auto &[id, ring] : known)
        if (id == id_) {
            this_thread_ = {id_, ring};
            return *ring;
        }
    rings_.push_back(std::make_unique<TraceRing>(static_cast<uint32_t>(rings_.size())));
    TraceRing *ring = rings_.back().get();
    known.emplace_back(id_, ring);
    this_thread_ = {id_, ring};
    return *ring;
}

size_t TraceRecorder::drain()
{
    size_t n = 0;
    std::lock_guard lock(rings_mutex_);
    clock_.recalibrate();
    for (auto &ring : rings_)
        n += ring->drain([&](const TraceEvent &e) {
            // A thread's events keep their order whatever the recalibration did in between.
            ring->last_ns = std::max(clock_.nanoseconds(e.time_ns), ring->last_ns);
            text_used_ = static_cast<size_t>(
                format_event_line(e, ring->last_ns, ring->thread(), text_.get() + text_used_) - text_.get());
            if (text_used_ >= kFlushBytes) {
                std::fwrite(text_.get(), 1, text_used_, file_);
                text_used_ = 0;
            }
        });
    std::fwrite(text_.get(), 1, text_used_, file_);
    text_used_ = 0;
    events_ += n;
    return n;
}

void TraceRecorder::writer_loop()
{
    while (!stop_.load(std::memory_order_acquire)) {
        if (drain() == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

} // namespace tidal::trace
