#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <sys/mman.h>
template <int F> __attribute__((noinline)) size_t run(const unsigned char *table, const std::vector<uint32_t> &order, unsigned char *out) {
    size_t found = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        unsigned char line[64];
        std::memcpy(line, table + size_t(order[i]) * 128, 64);
        asm volatile("" : : "r"(line) : "memory");
        size_t x = i, y = i, z = i, w = i;
        for (int f = 0; f < F / 4; ++f) asm volatile("add $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\tadd $1, %3" : "+r"(x), "+r"(y), "+r"(z), "+r"(w)); // four independent chains
        std::memcpy(out, line, 64); // stores of the result, as a query's
        asm volatile("" : : "r"(out) : "memory");
        size_t key; std::memcpy(&key, line + 8, 8);
        found += key == order[i];
        found += (x ^ y ^ z ^ w) & 0;
    }
    return found;
}
int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], 0, 10) : 1000000;
    size_t bytes = (n * 128 + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    auto *t = static_cast<unsigned char *>(std::aligned_alloc(2u << 20, bytes));
    madvise(t, bytes, MADV_HUGEPAGE); std::memset(t, 0, bytes);
    for (size_t i = 0; i < n; ++i) std::memcpy(t + i * 128 + 8, &i, 8);
    std::vector<uint32_t> order(2000000); std::mt19937_64 rng(1); for (auto &o : order) o = rng() % n;
    unsigned char out[64];
    auto time = [&](auto f) { auto t0 = std::chrono::steady_clock::now(); size_t r = f(); double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); std::printf("%8.1f ns (%zu)\n", s * 1e9 / order.size(), r); };
    std::printf("filler 0:   "); time([&] { return run<0>(t, order, out); });
    std::printf("filler 50:  "); time([&] { return run<50>(t, order, out); });
    std::printf("filler 100: "); time([&] { return run<100>(t, order, out); });
    std::printf("filler 200: "); time([&] { return run<200>(t, order, out); });
    std::printf("filler 400: "); time([&] { return run<400>(t, order, out); });
}
