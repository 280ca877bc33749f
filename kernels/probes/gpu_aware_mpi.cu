// gpu-aware-mpi: can a CUDA-aware MPI take each kind of memory tidal hands out? Such an MPI
// (Open MPI with UCX, MPICH, MVAPICH) decides per buffer what it is by asking the driver, then
// moves it by one of two paths: the copy path (cudaMemcpy through unified addressing, which
// takes any memory the driver knows) and, between processes of one node, the IPC path
// (cuMemGetAddressRange to find the allocation, cuIpcGetMemHandle to share it). This probe asks
// the same questions of a block of every kind, pooled and not, and moves bytes through it:
//   * the driver's memory type (CU_POINTER_ATTRIBUTE_MEMORY_TYPE, _IS_MANAGED);
//   * the allocation range the driver reports, which must contain the block;
//   * whether a legacy IPC handle can be made for that range (device memory only);
//   * a round trip of a pattern through the block by cudaMemcpy with cudaMemcpyDefault.
// What each kind must show is in `expect` below; any difference is a failure (exit 1). No GPU:
// exit 77. Public tidal API plus the CUDA runtime; the three driver calls are looked up through
// the runtime, as the CUDA module does, so that a machine without a driver gets the skip, not a
// loader error. Built with the nvcc kernels.
#include <cuda.h>
#include <cuda_runtime.h>
#include <tidal/tidal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum class Type { device, managed, host, unknown_to_the_driver };
const char *name(Type t)
{
    switch (t) {
    case Type::device: return "device";
    case Type::managed: return "managed";
    case Type::host: return "host (pinned)";
    default: return "not the driver's";
    }
}

struct Case {
    const char *label;
    const char *config; // appended to runtime = "cuda"
    tidal_kind kind;
    size_t size;
    Type type;      // what the driver must call it
    bool ipc;       // whether a legacy IPC handle must be possible (device memory)
};

// The driver calls, from the runtime's lookup (cudaGetDriverEntryPointByVersion, as of CUDA 12.0).
decltype(&cuPointerGetAttribute) pointer_attribute;
decltype(&cuMemGetAddressRange) address_range;
decltype(&cuIpcGetMemHandle) ipc_handle;
template <typename Fn> bool look_up(const char *symbol, Fn &out)
{
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
        return false;
    out = reinterpret_cast<Fn>(fn);
    return true;
}

int failures = 0;
void fail(const Case &c, const std::string &what)
{
    std::printf("  FAIL %s: %s\n", c.label, what.c_str());
    ++failures;
}

Type driver_type(const void *p)
{
    unsigned managed = 0;
    if (pointer_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS &&
        managed)
        return Type::managed;
    unsigned type = 0;
    if (pointer_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
        return Type::unknown_to_the_driver;
    return type == CU_MEMORYTYPE_DEVICE ? Type::device : type == CU_MEMORYTYPE_HOST ? Type::host : Type::unknown_to_the_driver;
}

// The copy path: a pattern in through the block's interior, out again, compared.
bool round_trip(char *p, size_t size)
{
    const size_t n = size < (size_t{1} << 20) ? size : (size_t{1} << 20), off = size - n;
    std::vector<unsigned char> in(n), out(n, 0);
    for (size_t i = 0; i < n; ++i)
        in[i] = static_cast<unsigned char>(i * 131 + 7);
    void *staging = nullptr;
    if (cudaMalloc(&staging, n) != cudaSuccess)
        return false;
    bool ok = cudaMemcpy(staging, in.data(), n, cudaMemcpyDefault) == cudaSuccess &&
              cudaMemcpy(p + off, staging, n, cudaMemcpyDefault) == cudaSuccess &&
              cudaMemset(staging, 0, n) == cudaSuccess && cudaMemcpy(staging, p + off, n, cudaMemcpyDefault) == cudaSuccess &&
              cudaMemcpy(out.data(), staging, n, cudaMemcpyDefault) == cudaSuccess && in == out;
    cudaFree(staging);
    return ok;
}

void probe(const Case &c)
{
    const std::string toml = std::string("runtime = \"cuda\"\n") + c.config;
    tidal_context *ctx = nullptr;
    if (tidal_context_create_from_string(toml.c_str(), &ctx) != TIDAL_OK) {
        fail(c, std::string("no context: ") + tidal_last_error());
        return;
    }
    tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT;
    d.kind = c.kind;
    d.device = 0;
    if (c.kind == TIDAL_KIND_PINNED || c.kind == TIDAL_KIND_PAGEABLE)
        d.device = TIDAL_DEVICE_HOST;
    // Two blocks: a pooled block is a piece of a larger runtime allocation, so the second one
    // usually lies inside the same range as the first, not at its start.
    void *first = nullptr, *p = nullptr;
    if (tidal_alloc(ctx, c.size, &d, &first) != TIDAL_OK || tidal_alloc(ctx, c.size, &d, &p) != TIDAL_OK) {
        fail(c, std::string("tidal_alloc: ") + tidal_last_error());
        tidal_context_destroy(ctx);
        return;
    }
    const Type t = driver_type(p);
    CUdeviceptr base = 0;
    size_t range = 0;
    const bool ranged = t != Type::unknown_to_the_driver &&
                        address_range(&base, &range, reinterpret_cast<CUdeviceptr>(p)) == CUDA_SUCCESS;
    const auto a = reinterpret_cast<CUdeviceptr>(p);
    const bool contains = ranged && a >= base && a + c.size <= base + range;
    CUipcMemHandle h;
    const CUresult ipc = t == Type::device ? ipc_handle(&h, base ? base : a) : CUDA_ERROR_NOT_SUPPORTED;
    const bool copied = round_trip(static_cast<char *>(p), c.size);
    std::printf("%-38s %-17s range %-9s ipc %-14s copy %s\n", c.label, name(t),
                !ranged ? "-" : contains ? "contains" : "WRONG", t != Type::device ? "-" : ipc == CUDA_SUCCESS ? "yes" : "no (copy path)",
                copied ? "ok" : "FAILED");
    if (t != c.type)
        fail(c, std::string("the driver calls it ") + name(t) + ", expected " + name(c.type));
    if (ranged && !contains)
        fail(c, "the driver's allocation range does not contain the block");
    if (c.type == Type::device && !ranged)
        fail(c, "the driver reports no allocation range");
    if (c.ipc && ipc != CUDA_SUCCESS)
        fail(c, "no IPC handle (error " + std::to_string(static_cast<int>(ipc)) + ")");
    if (!c.ipc && c.type == Type::device && ipc == CUDA_SUCCESS)
        fail(c, "an IPC handle where none was expected: update this probe and the README");
    if (!copied)
        fail(c, "the round trip through cudaMemcpy lost or changed bytes");
    tidal_free(ctx, p);
    tidal_free(ctx, first);
    tidal_context_destroy(ctx);
}

} // namespace

int main()
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("gpu-aware-mpi: no CUDA device; skipped\n");
        return 77;
    }
    if (!look_up("cuPointerGetAttribute", pointer_attribute) || !look_up("cuMemGetAddressRange", address_range) ||
        !look_up("cuIpcGetMemHandle", ipc_handle)) {
        std::printf("gpu-aware-mpi: the driver lacks cuPointerGetAttribute, cuMemGetAddressRange or cuIpcGetMemHandle\n");
        return 1;
    }
    const char *none = "", *no_pool = "[pool]\nenabled = false\n", *vendor = "[pool]\nbackend = \"vendor\"\n";
    const size_t small = 4096, large = size_t{64} << 20;
    const Case cases[] = {
        {"device, pooled, 4 KiB", none, TIDAL_KIND_DEVICE, small, Type::device, true},
        {"device, pooled, 64 MiB", none, TIDAL_KIND_DEVICE, large, Type::device, true},
        {"device, no pool, 4 KiB", no_pool, TIDAL_KIND_DEVICE, small, Type::device, true},
        {"device, vendor pool, 4 KiB", vendor, TIDAL_KIND_DEVICE, small, Type::device, false},
        {"managed, pooled, 4 KiB", none, TIDAL_KIND_MANAGED, small, Type::managed, false},
        {"managed, no pool, 64 MiB", no_pool, TIDAL_KIND_MANAGED, large, Type::managed, false},
        {"pinned, pooled, 4 KiB", none, TIDAL_KIND_PINNED, small, Type::host, false},
        {"pinned, no pool, 64 MiB", no_pool, TIDAL_KIND_PINNED, large, Type::host, false},
        {"pageable, 64 MiB", none, TIDAL_KIND_PAGEABLE, large, Type::unknown_to_the_driver, false},
        {"elastic, 64 MiB (resident)", none, TIDAL_KIND_ELASTIC, large, Type::device, false},
    };
    std::printf("%-38s %-17s %-15s %-18s %s\n", "kind", "driver's type", "range", "legacy IPC", "cudaMemcpy round trip");
    for (const Case &c : cases)
        probe(c);
    std::printf("gpu-aware-mpi: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
