// ThreadSanitizer's dynamic annotations, for the simulated device's unserialised mode (see
// sim_runtime.h). Outside a ThreadSanitizer build every function is empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define TIDAL_SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TIDAL_SIM_TSAN 1
#endif
#endif

#ifdef TIDAL_SIM_TSAN
// Provided by the ThreadSanitizer runtime (tsan_interface_ann).
extern "C" {
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void AnnotateHappensBefore(const char *file, int line, const volatile void *addr);
void AnnotateHappensAfter(const char *file, int line, const volatile void *addr);
}
#endif

namespace tidal::sim {

// Synchronisation by this thread until the matching end orders nothing.
inline void tsan_ignore_sync_begin()
{
#ifdef TIDAL_SIM_TSAN
    AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
#endif
}
inline void tsan_ignore_sync_end()
{
#ifdef TIDAL_SIM_TSAN
    AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
#endif
}
// This thread's reads and writes until the matching end are not checked.
inline void tsan_ignore_accesses_begin()
{
#ifdef TIDAL_SIM_TSAN
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
}
inline void tsan_ignore_accesses_end()
{
#ifdef TIDAL_SIM_TSAN
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
}
// What this thread did so far happens before what a thread does after
// tsan_happens_after(the same address).
inline void tsan_happens_before([[maybe_unused]] const void *address)
{
#ifdef TIDAL_SIM_TSAN
    AnnotateHappensBefore(__FILE__, __LINE__, address);
#endif
}
inline void tsan_happens_after([[maybe_unused]] const void *address)
{
#ifdef TIDAL_SIM_TSAN
    AnnotateHappensAfter(__FILE__, __LINE__, address);
#endif
}

} // namespace tidal::sim
