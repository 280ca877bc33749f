// A device stream as the pools see it: an opaque runtime handle. A distinct type (not a bare
// void *) so that "no stream" -- the synchronous overloads -- cannot be confused with the
// runtime's default stream, which is a null handle.
#pragma once

namespace tidal::pool {

struct StreamHandle {
    void *native = nullptr;
    friend bool operator==(StreamHandle, StreamHandle) = default;
};

} // namespace tidal::pool
