// One spin-wait step: tells the core a spin-wait is under way, so the sibling hyper-thread gets
// the pipeline and leaving the loop does not pay a memory-order mis-speculation.
#pragma once

namespace tidal {

inline void cpu_pause() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

} // namespace tidal
