/* Streams, events and synchronisation. */
#include "cuda_module.h"
#include "device_guard.h"

namespace tidal::cuda {

int stream_create(void *, int32_t device, void **stream) noexcept
{
    const DeviceGuard guard(device);
    if (guard.status() != cudaSuccess)
        return settle(guard.status());
    /* Non-blocking: tidal's migration streams must not serialise behind the application's
     * legacy default stream, nor hold it up. */
    cudaStream_t created = nullptr;
    const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    if (status != cudaSuccess)
        return settle(status);
    *stream = created;
    return static_cast<int>(cudaSuccess);
}

int stream_destroy(void *, void *stream) noexcept
{
    return settle(cudaStreamDestroy(as_stream(stream)));
}

int stream_synchronize(void *, void *stream) noexcept
{
    return settle(cudaStreamSynchronize(as_stream(stream)));
}

int event_create(void *, int32_t device, void **event) noexcept
{
    const DeviceGuard guard(device);
    if (guard.status() != cudaSuccess)
        return settle(guard.status());
    /* Timing stays enabled: event_elapsed_ms is how tidal's benchmarks time kernels. */
    cudaEvent_t created = nullptr;
    const cudaError_t status = cudaEventCreate(&created);
    if (status != cudaSuccess)
        return settle(status);
    *event = created;
    return static_cast<int>(cudaSuccess);
}

int event_destroy(void *, void *event) noexcept
{
    return settle(cudaEventDestroy(as_event(event)));
}

int event_record(void *, void *event, void *stream) noexcept
{
    return settle(cudaEventRecord(as_event(event), as_stream(stream)));
}

int stream_wait_event(void *, void *stream, void *event) noexcept
{
    return settle(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0));
}

int event_synchronize(void *, void *event) noexcept
{
    return settle(cudaEventSynchronize(as_event(event)));
}

int event_query(void *, void *event, int32_t *complete) noexcept
{
    const cudaError_t status = cudaEventQuery(as_event(event));
    if (status == cudaErrorNotReady) {
        *complete = 0;
        return static_cast<int>(cudaSuccess);
    }
    if (status != cudaSuccess)
        return settle(status);
    *complete = 1;
    return static_cast<int>(cudaSuccess);
}

int event_elapsed_ms(void *, void *start, void *end, float *ms) noexcept
{
    float elapsed = 0.0f;
    const cudaError_t status = cudaEventElapsedTime(&elapsed, as_event(start), as_event(end));
    if (status != cudaSuccess)
        return settle(status);
    *ms = elapsed;
    return static_cast<int>(cudaSuccess);
}

int device_synchronize(void *, int32_t device) noexcept
{
    const DeviceGuard guard(device);
    if (guard.status() != cudaSuccess)
        return settle(guard.status());
    return settle(cudaDeviceSynchronize());
}

} // namespace tidal::cuda
