// Test helpers for code that must wait for work on another thread: a gate that holds that
// work until the test releases it, and a bounded wait that fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>

namespace tidal::test {

using namespace std::chrono_literals;
inline constexpr auto kStillWaiting = 200ms; // how long a wait that must block is watched
inline constexpr auto kBound = 10s;          // past this, a wait that must end fails the test

// Holds whoever passes it until released; releases when it goes, so nothing stays blocked
// once a test ends, whatever failed.
class Gate {
public:
    ~Gate() { release(); }
    void pass()
    {
        std::unique_lock lock(mutex_);
        ++reached_;
        changed_.notify_all();
        changed_.wait(lock, [&] { return open_; });
    }
    bool reached_within(std::chrono::milliseconds t)
    {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, t, [&] { return reached_ > 0; });
    }
    void release()
    {
        std::lock_guard lock(mutex_);
        open_ = true;
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    int reached_ = 0;
    bool open_ = false;
};

// For a wait that must end once its gate is open. One that does not cannot fail the test any
// other way: the future's destructor would wait for it too.
template <typename T> T finish(std::future<T> &f, const char *what)
{
    if (f.wait_for(kBound) != std::future_status::ready) {
        std::fprintf(stderr, "timed out: %s\n", what);
        std::_Exit(EXIT_FAILURE);
    }
    return f.get();
}

} // namespace tidal::test
