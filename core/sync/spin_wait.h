// Spin-waiting, one way for the whole core: the step of every spinning loop (cpu_pause) and the
// bounded spin before a thread sleeps or gives way (spin_for).
#pragma once

#include <chrono>

namespace tidal {

// Tells the core a spin-wait is under way, so the sibling hyper-thread gets the pipeline and
// leaving the loop does not pay a memory-order mis-speculation.
inline void cpu_pause() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins until `ready()` or until `budget` has passed (the clock is read every 64 turns: it
// costs more than a look); returns whether `ready()` came true. A zero budget still looks up to
// 64 times, a few hundred nanoseconds (callers that must not spin test the budget first).
template <class Ready> bool spin_for(std::chrono::nanoseconds budget, Ready ready)
{
    const auto until = std::chrono::steady_clock::now() + budget;
    for (unsigned i = 1;; ++i) {
        if (ready())
            return true;
        if (i % 64 == 0 && std::chrono::steady_clock::now() >= until)
            return false;
        cpu_pause();
    }
}

} // namespace tidal
