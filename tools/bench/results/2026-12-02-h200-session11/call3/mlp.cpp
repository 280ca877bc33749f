// What a registry lookup of random blocks costs with page hints of 16 bytes (two node pointers,
// as now) or 4 bytes (a node's index), each lookup surrounded by W instructions of other work
// (a query's API code): ns per lookup, median of 5.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sys/mman.h>
#include <vector>
using Clock = std::chrono::steady_clock;
static void *huge(size_t bytes) {
    const size_t H = 2 << 20; bytes = (bytes + H - 1) / H * H;
    void *p = std::aligned_alloc(H, bytes); madvise(p, bytes, MADV_HUGEPAGE); std::memset(p, 0, bytes); return p;
}
struct Node { uint64_t pad; uint64_t base, size; unsigned char rest[208 - 24]; };
struct Wide { Node *a, *b; };
template <int W> static inline void work() {
    if constexpr (W > 0) {
        uint64_t x = 1, y = 2, z = 3, w = 4;
        for (int i = 0; i < W / 8; ++i) asm volatile("add %0,%1\n xor %1,%2\n add %2,%3\n xor %3,%0\n add %0,%1\n xor %1,%2\n add %2,%3\n xor %3,%0" : "+r"(x), "+r"(y), "+r"(z), "+r"(w));
    }
}
template <int W, bool Narrow> [[gnu::noinline]] static bool query(const void *tab, Node *nodes, uintptr_t a, unsigned char *out) {
    work<W>();
    const size_t blk = a >> 12;
    Node *n;
    if constexpr (Narrow) n = nodes + static_cast<const uint32_t *>(tab)[blk];
    else n = static_cast<const Wide *>(tab)[blk].a;
    if (a - n->base >= n->size) return false;
    std::memcpy(out, &n->base, 144);
    asm volatile("" : : "r"(out) : "memory");
    work<W>();
    return true;
}
template <int W, bool Narrow> static double run(size_t n, const void *tab, Node *nodes, const std::vector<uintptr_t> &addr) {
    std::vector<double> v; unsigned char out[160];
    for (int r = 0; r < 5; ++r) {
        size_t ok = 0; auto t0 = Clock::now();
        for (uintptr_t a : addr) ok += query<W, Narrow>(tab, nodes, a, out);
        v.push_back(std::chrono::duration<double>(Clock::now() - t0).count() * 1e9 / addr.size());
        if (ok != addr.size()) { std::puts("bad"); std::exit(1); }
    }
    std::sort(v.begin(), v.end()); return v[2];
}
int main(int argc, char **argv) {
    for (size_t n : {size_t{1000}, size_t{100000}, size_t{1000000}}) {
        Node *nodes = static_cast<Node *>(huge(n * sizeof(Node)));
        auto *wide = static_cast<Wide *>(huge(n * sizeof(Wide)));
        auto *narrow = static_cast<uint32_t *>(huge(n * sizeof(uint32_t)));
        std::vector<uint32_t> perm(n); for (size_t i = 0; i < n; ++i) perm[i] = i;
        std::mt19937_64 rng(n); std::shuffle(perm.begin(), perm.end(), rng); // block -> node, as the arena's order may differ
        for (size_t b = 0; b < n; ++b) { Node *x = nodes + perm[b]; x->base = b << 12; x->size = 4096; wide[b].a = x; narrow[b] = perm[b]; }
        std::vector<uintptr_t> addr(2000000); for (auto &a : addr) a = ((rng() % n) << 12) + 1 + rng() % 4095;
        std::printf("n=%7zu  16B: W0 %6.1f W100 %6.1f W200 %6.1f   4B: W0 %6.1f W100 %6.1f W200 %6.1f ns\n", n,
            run<0, false>(n, wide, nodes, addr), run<100, false>(n, wide, nodes, addr), run<200, false>(n, wide, nodes, addr),
            run<0, true>(n, narrow, nodes, addr), run<100, true>(n, narrow, nodes, addr), run<200, true>(n, narrow, nodes, addr));
        std::fflush(stdout);
        std::free(nodes); std::free(wide); std::free(narrow);
    }
}
