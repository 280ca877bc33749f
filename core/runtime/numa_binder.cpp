#include "runtime/numa_binder.h"

#include <cerrno>
#include <cstring>

#ifdef TIDAL_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace tidal {

#ifdef TIDAL_HAVE_HWLOC
namespace {

// One loaded topology for the process: loading it costs milliseconds, and binding calls only
// read it (hwloc's binding functions are thread-safe on a loaded topology).
hwloc_topology_t topology() noexcept
{
    static hwloc_topology_t t = [] {
        hwloc_topology_t made = nullptr;
        if (hwloc_topology_init(&made) != 0)
            return static_cast<hwloc_topology_t>(nullptr);
        if (hwloc_topology_load(made) != 0) {
            hwloc_topology_destroy(made);
            return static_cast<hwloc_topology_t>(nullptr);
        }
        return made;
    }();
    return t;
}

hwloc_obj_t node_object(int node) noexcept
{
    hwloc_topology_t t = topology();
    return t ? hwloc_get_numanode_obj_by_os_index(t, static_cast<unsigned>(node)) : nullptr;
}

std::string errno_text(const char *what)
{
    return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

NumaBinder::MemoryScope::MemoryScope(int node) noexcept
{
    if (node < 0)
        return;
    try {
        hwloc_obj_t obj = node_object(node);
        if (!obj) {
            failed_ = "hwloc knows no NUMA node " + std::to_string(node);
            return;
        }
        hwloc_nodeset_t previous = hwloc_bitmap_alloc();
        hwloc_membind_policy_t policy = HWLOC_MEMBIND_DEFAULT;
        if (!previous ||
            hwloc_get_membind(topology(), previous, &policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
            hwloc_bitmap_free(previous);
            failed_ = errno_text("reading the thread's memory policy");
            return;
        }
        if (hwloc_set_membind(topology(), obj->nodeset, HWLOC_MEMBIND_BIND,
                              HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
            hwloc_bitmap_free(previous);
            failed_ = errno_text("binding the thread's memory");
            return;
        }
        saved_ = previous;
        saved_policy_ = static_cast<int>(policy);
        bound_ = true;
    } catch (...) {
        failed_ = "out of memory";
    }
}

NumaBinder::MemoryScope::~MemoryScope()
{
    if (!bound_)
        return;
    auto previous = static_cast<hwloc_nodeset_t>(saved_);
    (void)hwloc_set_membind(topology(), previous, static_cast<hwloc_membind_policy_t>(saved_policy_),
                            HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
    hwloc_bitmap_free(previous);
}

std::string NumaBinder::bind_area(void *ptr, size_t size, int node) noexcept
{
    try {
        hwloc_obj_t obj = node_object(node);
        if (!obj)
            return "hwloc knows no NUMA node " + std::to_string(node);
        if (hwloc_set_area_membind(topology(), ptr, size, obj->nodeset, HWLOC_MEMBIND_BIND,
                                   HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) != 0)
            return errno_text("binding memory");
        return {};
    } catch (...) {
        return "out of memory";
    }
}

std::string NumaBinder::bind_thread(int node) noexcept
{
    try {
        hwloc_obj_t obj = node_object(node);
        if (!obj || !obj->cpuset)
            return "hwloc knows no NUMA node " + std::to_string(node);
        if (hwloc_set_cpubind(topology(), obj->cpuset, HWLOC_CPUBIND_THREAD) != 0)
            return errno_text("binding the thread to the node's CPUs");
        return {};
    } catch (...) {
        return "out of memory";
    }
}

#else // no hwloc: nothing is ever bound

NumaBinder::MemoryScope::MemoryScope(int node) noexcept
{
    if (node >= 0)
        failed_ = "tidal was built without hwloc";
}
NumaBinder::MemoryScope::~MemoryScope() = default;
std::string NumaBinder::bind_area(void *, size_t, int) noexcept { return "tidal was built without hwloc"; }
std::string NumaBinder::bind_thread(int) noexcept { return "tidal was built without hwloc"; }

#endif

} // namespace tidal
