/* Streams, events and synchronisation. */
#include "cuda_device_scope.h"
#include "cuda_entry_points.h"

namespace tidal::cuda {

int rt_stream_create(void *, int32_t device, void **stream) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    /* Non-blocking: tidal's migration streams must not serialise behind the application's
     * legacy default stream, nor hold it up. */
    cudaStream_t created = nullptr;
    const cudaError_t status = cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking);
    if (status != cudaSuccess)
        return settle(status);
    *stream = created;
    return static_cast<int>(cudaSuccess);
}

int rt_stream_destroy(void *, void *stream) noexcept
{
    return settle(cudaStreamDestroy(as_stream(stream)));
}

int rt_stream_synchronize(void *, void *stream) noexcept
{
    return settle(cudaStreamSynchronize(as_stream(stream)));
}

int rt_event_create(void *, int32_t device, void **event) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    /* Timing stays enabled: event_elapsed_ms is how tidal's benchmarks time kernels. */
    cudaEvent_t created = nullptr;
    const cudaError_t status = cudaEventCreate(&created);
    if (status != cudaSuccess)
        return settle(status);
    *event = created;
    return static_cast<int>(cudaSuccess);
}

int rt_event_destroy(void *, void *event) noexcept
{
    return settle(cudaEventDestroy(as_event(event)));
}

int rt_event_record(void *, void *event, void *stream) noexcept
{
    return settle(cudaEventRecord(as_event(event), as_stream(stream)));
}

int rt_stream_wait_event(void *, void *stream, void *event) noexcept
{
    return settle(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0));
}

int rt_event_synchronize(void *, void *event) noexcept
{
    return settle(cudaEventSynchronize(as_event(event)));
}

int rt_event_query(void *, void *event, int32_t *complete) noexcept
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

int rt_event_elapsed_ms(void *, void *start, void *end, float *ms) noexcept
{
    float elapsed = 0.0f;
    const cudaError_t status = cudaEventElapsedTime(&elapsed, as_event(start), as_event(end));
    if (status != cudaSuccess)
        return settle(status);
    *ms = elapsed;
    return static_cast<int>(cudaSuccess);
}

int rt_device_synchronize(void *, int32_t device) noexcept
{
    const DeviceScope scope(device);
    if (scope.status() != cudaSuccess)
        return settle(scope.status());
    return settle(cudaDeviceSynchronize());
}

} // namespace tidal::cuda
