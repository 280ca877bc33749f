// Streams and events for the HIP module. Handles cross the C table as void*; they are the
// hipStream_t / hipEvent_t themselves, so nothing is allocated around them.
#include <hip/hip_runtime_api.h>

#include "hip_device_scope.h"
#include "hip_entry_points.h"
#include "hip_errors.h"

namespace tidal::hip {

namespace {

hipStream_t as_stream(void *stream) noexcept { return static_cast<hipStream_t>(stream); }
hipEvent_t as_event(void *event) noexcept { return static_cast<hipEvent_t>(event); }

} // namespace

int rt_stream_create(void *, int32_t device, void **stream) noexcept
{
    return guarded([&] {
        const DeviceScope scope(device); // a stream belongs to the device current at creation
        if (scope.status() != hipSuccess)
            return scope.status();
        // Non-blocking: tidal's migration streams must not serialise with the application's
        // work on the legacy NULL stream.
        hipStream_t s = nullptr;
        const hipError_t rc = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
        if (rc == hipSuccess)
            *stream = s;
        return rc;
    });
}

int rt_stream_destroy(void *, void *stream) noexcept
{
    return guarded([&] { return hipStreamDestroy(as_stream(stream)); });
}

int rt_stream_synchronize(void *, void *stream) noexcept
{
    return guarded([&] { return hipStreamSynchronize(as_stream(stream)); });
}

int rt_event_create(void *, int32_t device, void **event) noexcept
{
    return guarded([&] {
        const DeviceScope scope(device);
        if (scope.status() != hipSuccess)
            return scope.status();
        // Timing stays enabled: event_elapsed_ms is part of the contract.
        hipEvent_t e = nullptr;
        const hipError_t rc = hipEventCreateWithFlags(&e, hipEventDefault);
        if (rc == hipSuccess)
            *event = e;
        return rc;
    });
}

int rt_event_destroy(void *, void *event) noexcept
{
    return guarded([&] { return hipEventDestroy(as_event(event)); });
}

int rt_event_record(void *, void *event, void *stream) noexcept
{
    return guarded([&] { return hipEventRecord(as_event(event), as_stream(stream)); });
}

int rt_stream_wait_event(void *, void *stream, void *event) noexcept
{
    return guarded([&] { return hipStreamWaitEvent(as_stream(stream), as_event(event), 0); });
}

int rt_event_synchronize(void *, void *event) noexcept
{
    return guarded([&] { return hipEventSynchronize(as_event(event)); });
}

int rt_event_query(void *, void *event, int32_t *complete) noexcept
{
    return guarded([&] {
        const hipError_t rc = hipEventQuery(as_event(event));
        if (rc == hipErrorNotReady) {
            *complete = 0;
            return hipSuccess;
        }
        if (rc == hipSuccess)
            *complete = 1;
        return rc;
    });
}

int rt_event_elapsed_ms(void *, void *start, void *end, float *ms) noexcept
{
    return guarded([&] {
        float elapsed = 0.0f;
        const hipError_t rc = hipEventElapsedTime(&elapsed, as_event(start), as_event(end));
        if (rc == hipSuccess)
            *ms = elapsed;
        return rc;
    });
}

} // namespace tidal::hip
