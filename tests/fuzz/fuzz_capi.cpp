// Fuzz target: a byte-coded sequence of C API calls on the simulated device.
//
// Input layout: two header bytes choose the configuration (devices, XNACK, pool, policy
// chain, copy staging, budget) and up to three [[sim.fault]] rules follow; then each
// operation is one opcode byte and its argument bytes (a missing byte reads 0).
//
// The harness keeps its own model of what it allocated, so it knows which status each call
// must return: live bases, interior pointers, freed pointers (and pool reuse of them) and
// foreign pointers are told apart by the model, not by tidal. It keeps a shadow copy of
// every small allocation's bytes and checks, through tidal_copy, that what was written reads
// back. Every status must be documented and never INTERNAL; a failure must carry a message.
// The context is destroyed at the end of each input, so LeakSanitizer sees what it kept.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

using fuzz::bit;

constexpr size_t kMaxOps = 512;
constexpr size_t kMaxLive = 48;
constexpr size_t kMaxStreams = 4;
constexpr size_t kShadowMax = 256 * 1024; // bytes of an allocation the model mirrors
constexpr size_t kHostBuffer = 1 << 20;   // the harness's own (non-tidal) memory

class Reader {
public:
    Reader(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    bool done() const { return pos_ >= size_; }
    uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }

private:
    const uint8_t *data_;
    size_t size_;
    size_t pos_ = 0;
};

struct Allocation {
    uint8_t *base;
    size_t size;
    tidal_kind kind;
    // The bytes the model knows the allocation holds; empty = unknown (fresh, too big, or a
    // failed copy may have written part of it).
    std::vector<uint8_t> shadow;
};

constexpr unsigned kFaultStatuses = bit(TIDAL_ERROR_RUNTIME) | bit(TIDAL_ERROR_OUT_OF_MEMORY) |
                                    bit(TIDAL_ERROR_ILLEGAL_ACCESS) | bit(TIDAL_ERROR_NOT_SUPPORTED) |
                                    bit(TIDAL_ERROR_INVALID_ARGUMENT) | bit(TIDAL_ERROR_NO_DEVICE);
constexpr unsigned kAnyStatus = 0x3FFFu & ~bit(TIDAL_ERROR_INTERNAL);

const char *const kFaultOps[] = {"alloc", "free", "prefetch", "advise", "memcpy",
                                 "memset", "register", "create", "kernel"};
const char *const kFaultErrors[] = {"hipErrorOutOfMemory", "hipErrorInvalidValue", "hipErrorInvalidHandle",
                                    "hipErrorNotSupported", "hipErrorIllegalAddress", "hipErrorUnknown",
                                    "hipErrorLaunchFailure", "hipErrorNotReady"};

class Session {
public:
    explicit Session(Reader &r) : r_(r), host_(pristine()), scratch_(kHostBuffer) {}

    // Builds the configuration from the header; false when the context cannot be made.
    bool open()
    {
        const uint8_t a = r_.u8(), b = r_.u8();
        devices_ = (a & 2) ? 2 : 1;
        std::string toml = "runtime = \"sim\"\nlog_level = \"error\"\n";
        static const char *const chains[] = {"", "policies = [\"rules\"]\n",
                                             "policies = [\"xnack\", \"lru\"]\n", "policies = [\"lru\"]\n"};
        toml += chains[(a >> 4) & 3];
        toml += (a & 4) ? "[pool]\nenabled = false\n" : (a & 8) ? "[pool]\nrelease_threshold = 0\ngrowth = \"1MiB\"\n" : "";
        if (b & 1)
            toml += "[copy]\nchunk_size = \"64KiB\"\nring_depth = 2\nthreads = 1\n";
        budget_ = (b & 2) ? static_cast<uint64_t>(1 + (b >> 4)) << 20 : 0;
        toml += "[migration]\nbudget = " + std::to_string(budget_) + "\n";
        if (b & 4)
            toml += "chunk_size = \"64KiB\"\n";
        toml += "[sim]\ndevices = " + std::to_string(devices_) + "\nxnack = " + ((a & 1) ? "true" : "false") + "\n";
        const unsigned faults = (a >> 6) & 3;
        for (unsigned i = 0; i < faults; ++i) {
            toml += "[[sim.fault]]\noperation = \"" + std::string(kFaultOps[r_.u8() % 9]) + "\"\n";
            toml += "nth = " + std::to_string(1 + r_.u8() % 64) + "\n";
            toml += "count = " + std::to_string(r_.u8() % 4) + "\n";
            toml += "error = \"" + std::string(kFaultErrors[r_.u8() % 8]) + "\"\n";
        }
        faulty_ = faults != 0;
        const tidal_status s = tidal_context_create_from_string(toml.c_str(), &ctx_);
        fuzz::expect("tidal_context_create_from_string", s, faulty_ ? kFaultStatuses | bit(TIDAL_OK) : bit(TIDAL_OK));
        return s == TIDAL_OK;
    }

    void run()
    {
        for (size_t n = 0; n < kMaxOps && !r_.done(); ++n) {
            switch (r_.u8() % 17) {
            case 0: allocate(nullptr, false); break;
            case 1: release(false); break;
            case 2: copy(false); break;
            case 3: copy(true); break;
            case 4: declare(); break;
            case 5: set_budget(); break;
            case 6: stream_create(); break;
            case 7: stream_destroy(); break;
            case 8: allocate(nullptr, true); break;
            case 9: release(true); break;
            case 10: query(); break;
            case 11: prefetch(); break;
            case 12: synchronize(); break;
            case 13: trim(); break;
            case 14: verify_all(); break;
            case 15: copy_batch(); break;
            case 16: stats(); break;
            }
        }
    }

    // Settles everything and destroys the context; leaks then show.
    void close()
    {
        for (void *s : streams_)
            fuzz::expect("tidal_stream_synchronize", tidal_stream_synchronize(ctx_, s), ok_or_fault());
        verify_all();
        if (r_.u8() & 1) // sometimes leave allocations for tidal_context_destroy to free
            while (!live_.empty())
                free_at(0, nullptr);
        for (size_t i = streams_.size(); i-- > 0;)
            fuzz::expect("tidal_stream_destroy", tidal_stream_destroy(ctx_, streams_[i]), ok_or_fault());
        fuzz::expect("tidal_context_destroy", tidal_context_destroy(ctx_), bit(TIDAL_OK));
    }

private:
    unsigned ok_or_fault() const { return bit(TIDAL_OK) | (faulty_ ? kFaultStatuses : 0); }

    // --- the model ------------------------------------------------------------------------
    std::optional<size_t> containing(const void *p) const
    {
        const auto *q = static_cast<const uint8_t *>(p);
        for (size_t i = 0; i < live_.size(); ++i)
            if (q >= live_[i].base && q < live_[i].base + live_[i].size)
                return i;
        return std::nullopt;
    }

    // A pointer for a call that takes one allocation: sometimes right, sometimes wrong.
    const void *pick_pointer()
    {
        const uint8_t sel = r_.u8();
        const uint8_t which = r_.u8();
        switch (sel % 8) {
        case 0: case 1: case 2: case 3:
            if (!live_.empty())
                return live_[which % live_.size()].base;
            return nullptr;
        case 4: // interior
            if (!live_.empty()) {
                const Allocation &a = live_[which % live_.size()];
                return a.size > 1 ? a.base + 1 + r_.u16() % (a.size - 1) : a.base;
            }
            return nullptr;
        case 5: // freed (the pool may have handed it out again: the model says)
            if (!freed_.empty())
                return freed_[which % freed_.size()];
            return nullptr;
        case 6: return host_.data() + which; // memory tidal never saw
        default: return nullptr;
        }
    }

    // --- allocation -----------------------------------------------------------------------
    size_t pick_size()
    {
        const uint8_t sel = r_.u8();
        switch (sel >> 6) {
        case 0: return 1 + r_.u16() % 4096;
        case 1: return 1 + (static_cast<size_t>(r_.u16()) << 2);
        case 2: return static_cast<size_t>(1 + r_.u8() % 64) << 20;
        default: {
            static const size_t odd[] = {0, SIZE_MAX, SIZE_MAX - 4095, size_t{1} << 40,
                                         size_t{1} << 62, (size_t{1} << 48) + 1, 3};
            return odd[sel % 7];
        }
        }
    }

    void allocate(void *stream_hint, bool async)
    {
        if (live_.size() >= kMaxLive)
            return;
        tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
        const uint8_t k = r_.u8() % 9;
        const int32_t kind_value = k <= 6 ? k : (k == 7 ? 7 : -1);
        std::memcpy(&desc.kind, &kind_value, sizeof kind_value); // may be outside the enum on purpose
        static const int32_t devices[] = {TIDAL_DEVICE_DEFAULT, 0, 1, TIDAL_DEVICE_HOST, 7};
        desc.device = devices[r_.u8() % 5];
        static const size_t aligns[] = {0, 0, 0, 256, 65536, 3, size_t{1} << 31};
        desc.alignment = aligns[r_.u8() % 7];
        static const char long_tag[] = "a-tag-longer-than-tidal-tag-max-which-is-sixty-four-bytes-with-its-nul";
        static const char *const tags[] = {nullptr, "weights", "act", long_tag};
        desc.tag = tags[r_.u8() % 4];
        desc.hints = r_.u8() & 0x7Fu;
        const size_t size = pick_size();
        void *stream = stream_hint;
        if (async)
            stream = pick_stream();
        const bool use_desc = r_.u8() % 8 != 0;

        const bool bad_arg = use_desc && (k > 6 || desc.alignment == 3 || desc.alignment > (size_t{1} << 30) ||
                                          desc.tag == long_tag || (desc.hints & ~TIDAL_HINT_ALL) != 0);
        const bool plain = !use_desc || (k >= 1 && k <= 4 && desc.device == TIDAL_DEVICE_DEFAULT &&
                                          !bad_arg);
        unsigned allowed;
        if (size == 0 || bad_arg) // refused; which error comes first is tidal's choice
            allowed = kAnyStatus & ~bit(TIDAL_OK);
        else if (plain && size <= (size_t{64} << 20) && !faulty_)
            allowed = bit(TIDAL_OK);
        else
            allowed = kAnyStatus;

        void *p = reinterpret_cast<void *>(1);
        const tidal_status s = async ? tidal_alloc_async(ctx_, size, use_desc ? &desc : nullptr, stream, &p)
                                     : tidal_alloc(ctx_, size, use_desc ? &desc : nullptr, &p);
        fuzz::expect(async ? "tidal_alloc_async" : "tidal_alloc", s, allowed);
        if (s != TIDAL_OK) {
            if (p != nullptr)
                fuzz::finding("a failed allocation left *out set", s);
            return;
        }
        if (p == nullptr)
            fuzz::finding("tidal_alloc returned OK and NULL", s);
        if (containing(p) || (size > 1 && containing(static_cast<uint8_t *>(p) + size - 1)))
            fuzz::finding("tidal_alloc handed out memory that is still live", s);
        if (async)
            mark_used(stream);
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        fuzz::expect("tidal_pointer_query (new)", tidal_pointer_query(ctx_, p, &info), bit(TIDAL_OK));
        if (info.base != p || info.size != size || info.kind == TIDAL_KIND_AUTO)
            fuzz::finding("tidal_pointer_query disagrees with tidal_alloc", TIDAL_OK);
        if (use_desc && k >= 1 && k <= 6 && info.kind != static_cast<tidal_kind>(k))
            fuzz::finding("an explicit kind was not kept", TIDAL_OK);
        std::erase(freed_, p);
        live_.push_back({static_cast<uint8_t *>(p), size, info.kind, {}});
    }

    void release(bool async)
    {
        const void *p = pick_pointer();
        void *stream = async ? pick_stream() : nullptr;
        const auto at = containing(p);
        if (p != nullptr && at && live_[*at].base == p) {
            free_at(*at, async ? stream : nullptr, async);
            return;
        }
        unsigned allowed = p == nullptr ? bit(TIDAL_OK)
                           : at       ? bit(TIDAL_ERROR_INVALID_ARGUMENT)
                                      : bit(TIDAL_ERROR_UNKNOWN_POINTER);
        const tidal_status s = async ? tidal_free_async(ctx_, const_cast<void *>(p), stream)
                                     : tidal_free(ctx_, const_cast<void *>(p));
        fuzz::expect(async ? "tidal_free_async (wrong pointer)" : "tidal_free (wrong pointer)", s,
                     allowed | (p == nullptr && faulty_ ? kFaultStatuses : 0));
    }

    void free_at(size_t i, void *stream, bool async = false)
    {
        void *p = live_[i].base;
        const tidal_status s = async ? tidal_free_async(ctx_, p, stream) : tidal_free(ctx_, p);
        fuzz::expect(async ? "tidal_free_async" : "tidal_free", s, ok_or_fault());
        if (async)
            mark_used(stream);
        if (s != TIDAL_OK) {
            // A runtime failure may or may not have freed it: ask.
            tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
            if (fuzz::checked("tidal_pointer_query", tidal_pointer_query(ctx_, p, &info)) == TIDAL_OK)
                return;
        }
        live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
        if (freed_.size() < 64)
            freed_.push_back(p);
        else
            freed_[r_.u8() % freed_.size()] = p;
    }

    void query()
    {
        const void *p = pick_pointer();
        tidal_pointer_info info = TIDAL_POINTER_INFO_INIT;
        const auto at = containing(p);
        const tidal_status s = tidal_pointer_query(ctx_, p, &info);
        fuzz::expect("tidal_pointer_query", s,
                     p == nullptr ? bit(TIDAL_ERROR_INVALID_ARGUMENT) | bit(TIDAL_ERROR_UNKNOWN_POINTER)
                     : at         ? bit(TIDAL_OK)
                                  : bit(TIDAL_ERROR_UNKNOWN_POINTER));
        if (at && (info.base != live_[*at].base || info.size != live_[*at].size))
            fuzz::finding("tidal_pointer_query names another allocation", s);
    }

    // --- streams --------------------------------------------------------------------------
    void *pick_stream()
    {
        const uint8_t sel = r_.u8();
        if (streams_.empty() || sel % 4 == 0)
            return nullptr;
        return streams_[sel % streams_.size()];
    }

    void mark_used(void *stream)
    {
        for (size_t i = 0; i < streams_.size(); ++i)
            if (streams_[i] == stream)
                used_[i] = true;
    }

    void stream_create()
    {
        if (streams_.size() >= kMaxStreams)
            return;
        const int32_t device = static_cast<int32_t>(r_.u8() % 4) - 1; // -1 .. 2
        void *s = nullptr;
        const bool valid = device >= 0 && device < devices_;
        const tidal_status st = tidal_stream_create(ctx_, device, &s);
        fuzz::expect("tidal_stream_create", st,
                     valid ? ok_or_fault() : bit(TIDAL_ERROR_NOT_FOUND) | bit(TIDAL_ERROR_INVALID_ARGUMENT));
        if (st == TIDAL_OK) {
            streams_.push_back(s);
            used_.push_back(false);
        }
    }

    void stream_destroy()
    {
        const uint8_t sel = r_.u8();
        if (streams_.empty() || sel % 8 == 0) {
            fuzz::expect("tidal_stream_destroy (NULL)", tidal_stream_destroy(ctx_, nullptr), bit(TIDAL_OK));
            return;
        }
        const size_t i = sel % streams_.size();
        fuzz::expect("tidal_stream_destroy", tidal_stream_destroy(ctx_, streams_[i]), ok_or_fault());
        streams_.erase(streams_.begin() + static_cast<std::ptrdiff_t>(i));
        used_.erase(used_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    void synchronize()
    {
        void *s = pick_stream();
        fuzz::expect("tidal_stream_synchronize", tidal_stream_synchronize(ctx_, s), ok_or_fault());
    }

    // --- copies ---------------------------------------------------------------------------
    struct Span {
        uint8_t *ptr;
        size_t room;              // bytes from ptr to the end of its memory
        Allocation *owner;        // nullptr: the harness's host buffer
        size_t offset;
    };

    Span pick_span(std::vector<uint8_t> &host)
    {
        const uint8_t sel = r_.u8();
        if (live_.empty() || sel % 3 == 0) {
            const size_t off = r_.u16() % host.size();
            return {host.data() + off, host.size() - off, nullptr, off};
        }
        Allocation &a = live_[r_.u8() % live_.size()];
        const size_t off = (sel & 0x80) ? 0 : r_.u16() % a.size;
        return {a.base + off, a.size - off, &a, off};
    }

    static bool overlap(const Span &a, size_t na, const Span &b, size_t nb)
    {
        return na != 0 && nb != 0 && a.ptr < b.ptr + nb && b.ptr < a.ptr + na;
    }
    static bool overlap(const Span &a, const Span &b, size_t n) { return overlap(a, n, b, n); }

    // The model after `n` bytes went from src to dst.
    void record_copy(const Span &dst, const Span &src, size_t n)
    {
        const uint8_t *from = nullptr;
        std::vector<uint8_t> tmp;
        if (src.owner == nullptr) {
            from = src.ptr;
        } else if (!src.owner->shadow.empty()) {
            tmp.assign(src.owner->shadow.begin() + static_cast<std::ptrdiff_t>(src.offset),
                       src.owner->shadow.begin() + static_cast<std::ptrdiff_t>(src.offset + n));
            from = tmp.data();
        }
        if (dst.owner == nullptr) {
            // The harness's own memory: check it at once.
            if (from != nullptr && src.owner != nullptr && std::memcmp(dst.ptr, from, n) != 0)
                fuzz::finding("bytes copied out of a tidal allocation differ from those copied in", TIDAL_OK);
            return;
        }
        Allocation &d = *dst.owner;
        if (d.size > kShadowMax)
            return;
        if (from == nullptr) {
            d.shadow.clear();
            return;
        }
        if (d.shadow.empty()) {
            if (dst.offset != 0 || n != d.size)
                return; // part of it still unknown
            d.shadow.resize(d.size);
        }
        std::memcpy(d.shadow.data() + dst.offset, from, n);
    }

    void copy(bool async)
    {
        const Span dst = pick_span(host_);
        const Span src = pick_span(host_);
        const uint8_t how = r_.u8();
        size_t n = std::min<size_t>({dst.room, src.room, kHostBuffer});
        n = (how & 0x80) ? n : n * (how & 0x7F) / 127;
        // Sometimes one byte or more past the destination's end: refused, nothing copied.
        bool past_end = false;
        if ((how & 0x40) && dst.owner != nullptr) {
            n = dst.room + 1 + (how & 0x0F);
            past_end = true;
        }
        void *stream = async ? pick_stream() : nullptr;
        const tidal_status s = async ? tidal_copy_async(ctx_, dst.ptr, src.ptr, n, stream)
                                     : tidal_copy(ctx_, dst.ptr, src.ptr, n);
        if (past_end) {
            fuzz::expect("tidal_copy past an allocation's end", s, bit(TIDAL_ERROR_INVALID_ARGUMENT));
            return;
        }
        const unsigned overlapping = overlap(dst, src, n) ? bit(TIDAL_ERROR_INVALID_ARGUMENT) : 0;
        fuzz::expect(async ? "tidal_copy_async" : "tidal_copy", s, ok_or_fault() | overlapping);
        if (s == TIDAL_OK && async)
            fuzz::expect("tidal_stream_synchronize", tidal_stream_synchronize(ctx_, stream), ok_or_fault());
        if (s != TIDAL_OK) {
            if (dst.owner != nullptr && s != TIDAL_ERROR_INVALID_ARGUMENT)
                dst.owner->shadow.clear();
            return;
        }
        record_copy(dst, src, n); // an accepted overlap worked like memmove: so does the model
    }

    void copy_batch()
    {
        tidal_copy_item items[3] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
        Span dsts[3], srcs[3];
        size_t sizes[3];
        const size_t count = 1 + r_.u8() % 3;
        for (size_t i = 0; i < count; ++i) {
            dsts[i] = pick_span(host_);
            srcs[i] = pick_span(host_);
            sizes[i] = std::min<size_t>({dsts[i].room, srcs[i].room, size_t{4096}}) * (r_.u8() % 17) / 16;
            items[i].dst = dsts[i].ptr;
            items[i].src = srcs[i].ptr;
            items[i].size = sizes[i];
        }
        bool overlaps = false;
        for (size_t i = 0; i < count; ++i)
            for (size_t j = 0; j < count; ++j) {
                if (overlap(dsts[i], sizes[i], srcs[j], sizes[j]))
                    overlaps = true;
                if (i != j && overlap(dsts[i], sizes[i], dsts[j], sizes[j]))
                    overlaps = true;
            }
        void *stream = pick_stream();
        const tidal_status s = tidal_copy_batch(ctx_, items, count, stream);
        // Documented: overlapping items are refused (the check may be coarser than ours).
        fuzz::expect("tidal_copy_batch", s, ok_or_fault() | bit(TIDAL_ERROR_INVALID_ARGUMENT));
        if (s == TIDAL_ERROR_INVALID_ARGUMENT && !overlaps)
            fuzz::finding("tidal_copy_batch refused items that do not overlap", s);
        if (overlaps && s == TIDAL_OK)
            fuzz::finding("tidal_copy_batch accepted overlapping items", s);
        if (s == TIDAL_OK)
            fuzz::expect("tidal_stream_synchronize", tidal_stream_synchronize(ctx_, stream), ok_or_fault());
        for (size_t i = 0; i < count; ++i) {
            if (s == TIDAL_OK)
                record_copy(dsts[i], srcs[i], sizes[i]);
            else if (dsts[i].owner != nullptr)
                dsts[i].owner->shadow.clear();
        }
    }

    // Reads every allocation the model mirrors back through tidal_copy and compares.
    void verify_all()
    {
        for (Allocation &a : live_) {
            if (a.shadow.empty())
                continue;
            const tidal_status s = tidal_copy(ctx_, scratch_.data(), a.base, a.size);
            fuzz::expect("tidal_copy (read back)", s, ok_or_fault());
            if (s != TIDAL_OK)
                continue;
            if (std::memcmp(scratch_.data(), a.shadow.data(), a.size) != 0)
                fuzz::finding("an allocation does not hold what was copied into it", s);
        }
    }

    // --- migration ------------------------------------------------------------------------
    void declare()
    {
        tidal_access acc[4];
        const size_t count = r_.u8() % 5;
        bool bad = false, unknown = false, strict = !faulty_ && budget_ == 0;
        for (size_t i = 0; i < count; ++i) {
            acc[i] = TIDAL_ACCESS_INIT;
            const void *p = pick_pointer();
            acc[i].ptr = p;
            const auto at = containing(p);
            const uint8_t sel = r_.u8();
            if (at) {
                const Allocation &a = live_[*at];
                const size_t off = static_cast<size_t>(static_cast<const uint8_t *>(p) - a.base);
                acc[i].size = 1 + r_.u16() % (a.size - off);
                if (sel & 0x80) { // past the end
                    acc[i].size = a.size - off + 1;
                    bad = true;
                }
            } else {
                acc[i].size = 1 + r_.u8();
                if (p == nullptr)
                    bad = true;
                else
                    unknown = true;
            }
            static const int32_t devs[] = {0, 0, TIDAL_DEVICE_HOST, 1, 7};
            acc[i].device = devs[sel % 5];
            if (acc[i].device == 7 || acc[i].device >= devices_)
                strict = false, bad = true;
            if (acc[i].device != 0)
                strict = false;
            acc[i].mode = 1 + (sel >> 3) % 3;
            if ((sel & 0x60) == 0x60) {
                acc[i].mode = (sel & 1) ? 0 : 4;
                bad = true;
            }
        }
        uint32_t flags = r_.u8() % 4 == 3 ? 2u : 0u;
        if (flags == 0 && r_.u8() % 4 == 0)
            flags = TIDAL_DECLARE_LOOKAHEAD;
        if (flags == 2)
            bad = true;
        void *stream = pick_stream();
        // Sometimes a count no array can hold, with a real array: refused before any entry is read.
        const bool huge = count == 0 && (flags & 2);
        if (huge)
            acc[0] = TIDAL_ACCESS_INIT;
        const tidal_status s = tidal_declare(ctx_, stream, count || huge ? acc : nullptr, huge ? SIZE_MAX : count, flags);
        unsigned allowed = kAnyStatus;
        if (bad || unknown || huge)
            allowed &= ~bit(TIDAL_OK);
        else if (strict)
            allowed = bit(TIDAL_OK);
        fuzz::expect("tidal_declare", s, allowed);
        mark_used(stream);
    }

    void prefetch()
    {
        const void *p = pick_pointer();
        const auto at = containing(p);
        size_t size = 1 + r_.u16();
        if (at) {
            const Allocation &a = live_[*at];
            size = 1 + size % (a.base + a.size - static_cast<const uint8_t *>(p));
        }
        static const int32_t devs[] = {0, TIDAL_DEVICE_HOST, 1, 7};
        const int32_t device = devs[r_.u8() % 4];
        const tidal_status s = tidal_prefetch(ctx_, p, size, device);
        unsigned allowed = kAnyStatus;
        if (!at)
            allowed = bit(TIDAL_ERROR_UNKNOWN_POINTER) | bit(TIDAL_ERROR_INVALID_ARGUMENT);
        else if (device == 7 || device >= devices_)
            allowed = bit(TIDAL_ERROR_NOT_FOUND) | bit(TIDAL_ERROR_INVALID_ARGUMENT);
        fuzz::expect("tidal_prefetch", s, allowed);
    }

    void set_budget()
    {
        static const int32_t devs[] = {0, 0, 1, 7, TIDAL_DEVICE_HOST};
        const int32_t device = devs[r_.u8() % 5];
        static const uint64_t sizes[] = {0, 64 << 10, 2 << 20, 8 << 20, 64 << 20};
        const uint64_t bytes = sizes[r_.u8() % 5];
        const bool valid = device >= 0 && device < devices_;
        fuzz::expect("tidal_budget_set", tidal_budget_set(ctx_, device, bytes),
                     valid ? bit(TIDAL_OK) : bit(TIDAL_ERROR_NOT_FOUND) | bit(TIDAL_ERROR_INVALID_ARGUMENT));
        if (valid && device == 0)
            budget_ = bytes;
    }

    void trim()
    {
        uint64_t released = 0;
        fuzz::expect("tidal_pool_trim", tidal_pool_trim(ctx_, (r_.u8() & 1) ? &released : nullptr), ok_or_fault());
    }

    void stats()
    {
        const int32_t device = static_cast<int32_t>(r_.u8() % 4) - 2; // HOST, DEFAULT, 0, 1
        const tidal_kind kind = static_cast<tidal_kind>(r_.u8() % TIDAL_KIND_COUNT);
        tidal_pool_stats ps = TIDAL_POOL_STATS_INIT;
        fuzz::checked("tidal_pool_stats_get", tidal_pool_stats_get(ctx_, kind, device, &ps));
        if (ps.in_use_bytes > ps.reserved_bytes && ps.reserved_bytes != 0)
            fuzz::finding("a pool has more in use than it reserved", TIDAL_OK);
        tidal_migration_stats ms = TIDAL_MIGRATION_STATS_INIT;
        const tidal_status s = tidal_migration_stats_get(ctx_, device, &ms);
        fuzz::expect("tidal_migration_stats_get", s,
                     device >= 0 && device < devices_ ? bit(TIDAL_OK)
                                                      : bit(TIDAL_ERROR_NOT_FOUND) | bit(TIDAL_ERROR_INVALID_ARGUMENT));
        if (s == TIDAL_OK && ms.protected_bytes > ms.resident_bytes)
            fuzz::finding("more bytes protected than resident", s);
    }

    // The host buffer's first contents, made once: filling it per input cost most of the
    // fuzzer's time (every comparison in the loop is traced).
    static const std::vector<uint8_t> &pristine()
    {
        static const std::vector<uint8_t> bytes = [] {
            std::vector<uint8_t> b(kHostBuffer);
            for (size_t i = 0; i < b.size(); ++i)
                b[i] = static_cast<uint8_t>(i * 131 + 7);
            return b;
        }();
        return bytes;
    }

    Reader &r_;
    tidal_context *ctx_ = nullptr;
    int32_t devices_ = 1;
    bool faulty_ = false;
    uint64_t budget_ = 0;
    std::vector<Allocation> live_;
    std::vector<void *> freed_;
    std::vector<void *> streams_;
    std::vector<bool> used_;
    std::vector<uint8_t> host_;
    std::vector<uint8_t> scratch_;
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    fuzz::isolate_process();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Reader reader(data, size);
    Session session(reader);
    if (!session.open())
        return 0;
    session.run();
    session.close();
    return 0;
}
