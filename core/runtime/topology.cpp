#include "runtime/topology.h"

#include <cstdlib>

#ifdef TIDAL_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace tidal {

int Topology::numa_node_of_pci(const char *pci_bus_id) noexcept
{
#ifdef TIDAL_HAVE_HWLOC
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0)
        return -1;
    int node = -1;
    hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topology) == 0) {
        hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topology, pci_bus_id);
        hwloc_obj_t parent = pci ? hwloc_get_non_io_ancestor_obj(topology, pci) : nullptr;
        if (parent && parent->nodeset) {
            int first = hwloc_bitmap_first(parent->nodeset);
            // A parent spanning every node (the whole machine) says nothing about locality.
            if (first >= 0 && hwloc_bitmap_weight(parent->nodeset) == 1)
                node = first;
        }
    }
    hwloc_topology_destroy(topology);
    return node;
#else
    (void)pci_bus_id;
    return -1;
#endif
}

std::string Topology::cpus_of_numa_node(int node)
{
#ifdef TIDAL_HAVE_HWLOC
    if (node < 0)
        return {};
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0)
        return {};
    std::string cpus;
    if (hwloc_topology_load(topology) == 0) {
        hwloc_obj_t numa = hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(node));
        char *text = nullptr;
        if (numa && numa->cpuset && hwloc_bitmap_list_asprintf(&text, numa->cpuset) >= 0 && text) {
            cpus = text;
            std::free(text);
        }
    }
    hwloc_topology_destroy(topology);
    return cpus;
#else
    (void)node;
    return {};
#endif
}

} // namespace tidal
