// Where each GPU sits in the machine. GPU runtimes report a PCI bus id but not the NUMA node;
// hwloc maps one to the other (there is no HIP attribute for it, and CUDA's reads -1 in VMs).
#pragma once

#include <string>

namespace tidal {

class Topology {
public:
    // The NUMA node nearest the PCI device "dddd:bb:dd.f", or -1 when unknown or without hwloc.
    static int numa_node_of_pci(const char *pci_bus_id) noexcept;
    // The CPUs of NUMA node `node` as a list ("0-15,32-47"); "" when unknown or without hwloc.
    static std::string cpus_of_numa_node(int node);
};

} // namespace tidal
