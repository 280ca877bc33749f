/* Several devices on the simulated topologies (profiles pcie-switch2 and xgmi4): the peer
 * matrix in the system description, copies between devices over the peer link (correct, and
 * charged at the link's rate on the simulated clock), with peer access off (staged through
 * pinned memory), refused with peer_fallback = "error", batched across devices; a machine of
 * one device; copies between two contexts' buffers on one device. */
#define _POSIX_C_SOURCE 200809L /* dup, setenv */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define MIB ((size_t)1 << 20)

static const char *kSwitch = "runtime = \"sim\"\n[sim]\nprofile = \"pcie-switch2\"\ncapacity = \"1GiB\"\n";

static tidal_peer_info peer_of(tidal_context *ctx, int32_t a, int32_t b)
{
    tidal_peer_info info = TIDAL_PEER_INFO_INIT;
    assert_ok(tidal_peer_info_get(ctx, a, b, &info));
    assert_int_equal(info.device, a);
    assert_int_equal(info.peer, b);
    return info;
}

static void *device_alloc(tidal_context *ctx, int32_t device, size_t size)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_DEVICE;
    desc.device = device;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &p));
    return p;
}

static double clock_of(tidal_context *ctx)
{
    double t = 0;
    assert_ok(tidal_clock(ctx, &t));
    return t;
}

/* Fills `dst` on a device with seed's pattern through a host buffer. */
static void fill_device(tidal_context *ctx, void *dst, size_t size, unsigned seed)
{
    unsigned char *host = malloc(size);
    assert_non_null(host);
    harness_fill(host, size, seed);
    assert_ok(tidal_copy(ctx, dst, host, size));
    free(host);
}

static int device_holds(tidal_context *ctx, const void *src, size_t size, unsigned seed)
{
    unsigned char *host = calloc(1, size);
    assert_non_null(host);
    assert_ok(tidal_copy(ctx, host, src, size));
    const int ok = harness_holds(host, size, seed);
    free(host);
    return ok;
}

/* A configuration naming a profile file written to `dir` with the given [topology] body (and
 * minimal device figures); the caller frees it. */
static char *profile_config(const char *dir, const char *topology)
{
    static int serial = 0;
    char *name = harness_format("profile-%d.toml", serial++);
    char *text = harness_format(
        "[device]\nname = \"x\"\nvendor = \"amd\"\narch = \"gfx90a\"\ncapacity = \"1GiB\"\n"
        "page_size = \"2MiB\"\nl2_size = 0\nxnack = true\n"
        "[bandwidth]\nh2d_pageable = 1\nh2d_pinned = 1\nd2h_pageable = 1\nd2h_pinned = 1\nd2d = 1\n"
        "prefetch_h2d = 1\nprefetch_d2h = 1\nfault = 1\nzero_copy = 1\nhost_memcpy = 1\n"
        "[latency]\ncopy = 0\nkernel_launch = 0\nfault = 0\nalloc_device = 0\nalloc_pinned = 0\n"
        "alloc_managed = 0\n[topology]\n%s",
        topology);
    char *path = harness_write_file(dir, name, text);
    char *quoted = harness_toml_string(path);
    char *config = harness_format("runtime = \"sim\"\n[sim]\nprofile = %s\n", quoted);
    free(quoted);
    free(path);
    free(text);
    free(name);
    return config;
}

static void test_matrix_pcie_switch(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(kSwitch);
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.device_count, 2); /* the profile's machine, [sim] devices left out */
    for (int32_t d = 0; d < 2; ++d) {
        tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
        assert_ok(tidal_device_info_get(ctx, d, &info));
        assert_int_equal(info.peer_mask, 0x3u);
        assert_true(info.pci_bus_id[0] != '\0');
    }
    tidal_peer_info self = peer_of(ctx, 1, 1);
    assert_int_equal(self.can_access, 1);
    assert_int_equal(self.link, TIDAL_LINK_SAME);
    assert_int_equal(self.hops, 0);
    tidal_peer_info link = peer_of(ctx, 0, 1);
    assert_int_equal(link.can_access, 1);
    assert_int_equal(link.link, TIDAL_LINK_PCIE);
    assert_int_equal(link.hops, 2);
    assert_int_equal(link.enabled, 0); /* enabled on first use, not before */
    assert_true(link.bandwidth > 49.99 && link.bandwidth < 50.01);
    assert_true(link.latency_us > 9.99 && link.latency_us < 10.01);
    tidal_peer_info bad = TIDAL_PEER_INFO_INIT;
    assert_status(tidal_peer_info_get(ctx, 0, 2, &bad), TIDAL_ERROR_NOT_FOUND);
    assert_last_error_contains("device 2");
    assert_status(tidal_peer_info_get(ctx, -1, 0, &bad), TIDAL_ERROR_NOT_FOUND);
    assert_status(tidal_peer_info_get(ctx, 0, 1, NULL), TIDAL_ERROR_INVALID_ARGUMENT);
    bad.struct_size = 4;
    assert_status(tidal_peer_info_get(ctx, 0, 1, &bad), TIDAL_ERROR_INVALID_ARGUMENT);
    assert_ok(tidal_context_destroy(ctx));
}

static void test_matrix_xgmi_mesh(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context("runtime = \"sim\"\n[sim]\nprofile = \"xgmi4\"\ncapacity = \"1GiB\"\n");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    assert_ok(tidal_system_info_get(ctx, &sys));
    assert_int_equal(sys.device_count, 4);
    for (int32_t a = 0; a < 4; ++a) {
        tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
        assert_ok(tidal_device_info_get(ctx, a, &info));
        assert_int_equal(info.peer_mask, 0xFu);
        for (int32_t b = 0; b < 4; ++b) {
            tidal_peer_info l = peer_of(ctx, a, b);
            assert_int_equal(l.can_access, 1);
            assert_int_equal(l.link, a == b ? TIDAL_LINK_SAME : TIDAL_LINK_XGMI);
            assert_int_equal(l.hops, a == b ? 0 : 1);
        }
    }
    assert_ok(tidal_context_destroy(ctx));
}

/* One device (the H200 profile): a matrix of one, and nothing else to reach. */
static void test_matrix_of_one(void **state)
{
    tidal_context *ctx = *state;
    tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
    assert_ok(tidal_device_info_get(ctx, 0, &info));
    assert_int_equal(info.peer_mask, 0x1u);
    tidal_peer_info self = peer_of(ctx, 0, 0);
    assert_int_equal(self.link, TIDAL_LINK_SAME);
    assert_int_equal(self.enabled, 0);
    tidal_peer_info none = TIDAL_PEER_INFO_INIT;
    assert_status(tidal_peer_info_get(ctx, 0, 1, &none), TIDAL_ERROR_NOT_FOUND);
}

/* A device-to-device copy goes over the link once peer access is enabled: correct bytes, the
 * pair marked enabled, and the simulated clock charged latency + bytes / link bandwidth (not
 * the device's own d2d rate, nor a trip through the host). */
static void test_peer_copy_charged_at_link_rate(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(kSwitch);
    const size_t size = 64 * MIB;
    void *a = device_alloc(ctx, 0, size), *b = device_alloc(ctx, 1, size);
    fill_device(ctx, a, size, 7);
    const double before = clock_of(ctx);
    assert_ok(tidal_copy(ctx, b, a, size));
    const double took = clock_of(ctx) - before;
    const double expected = 10e-6 + (double)size / 50e9;
    assert_true(took > expected * 0.99 && took < expected * 1.01);
    assert_true(device_holds(ctx, b, size, 7));
    assert_int_equal(peer_of(ctx, 0, 1).enabled, 1);
    assert_int_equal(peer_of(ctx, 1, 0).enabled, 1);

    /* Back the other way, asynchronously on a stream of device 1. */
    fill_device(ctx, b, size, 9);
    void *stream = NULL;
    assert_ok(tidal_stream_create(ctx, 1, &stream));
    assert_ok(tidal_copy_async(ctx, a, b, size, stream));
    assert_ok(tidal_stream_synchronize(ctx, stream));
    assert_true(device_holds(ctx, a, size, 9));
    assert_ok(tidal_stream_destroy(ctx, stream));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* peer_access = "off": never enabled; the copy stages through pinned memory and is charged
 * down one host link and up the other. */
static void test_peer_access_off_stages(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context_format("%s[copy]\nchunk_size = \"16MiB\"\n[topology]\npeer_access = \"off\"\n",
                                                kSwitch);
    const size_t size = 64 * MIB;
    void *a = device_alloc(ctx, 0, size), *b = device_alloc(ctx, 1, size);
    fill_device(ctx, a, size, 3);
    const double before = clock_of(ctx);
    assert_ok(tidal_copy(ctx, b, a, size));
    const double took = clock_of(ctx) - before;
    /* 4 chunks, each down (8 us + 16 MiB / 55.3 GB/s) and up (8 us + 16 MiB / 55.4 GB/s). */
    const double expected = 8 * 8e-6 + (double)size / 55.3e9 + (double)size / 55.4e9;
    assert_true(took > expected * 0.99 && took < expected * 1.01);
    assert_true(device_holds(ctx, b, size, 3));
    assert_int_equal(peer_of(ctx, 0, 1).enabled, 0);
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* Devices with no link between them (a third device the profile does not connect), and
 * peer_fallback = "error": refused, naming both devices; with "stage" (the default) copied. */
static void test_no_peer_path_fallback_and_error(void **state)
{
    (void)state;
    const size_t size = 3 * MIB + 5;
    tidal_context *ctx = harness_context_format("%s[topology]\npeer_fallback = \"error\"\n",
                                                "runtime = \"sim\"\n[sim]\nprofile = \"pcie-switch2\"\ndevices = 3\ncapacity = \"1GiB\"\n");
    assert_int_equal(peer_of(ctx, 0, 2).can_access, 0);
    assert_int_equal(peer_of(ctx, 0, 2).link, TIDAL_LINK_NONE);
    void *a = device_alloc(ctx, 0, size), *c = device_alloc(ctx, 2, size);
    fill_device(ctx, a, size, 5);
    assert_status(tidal_copy(ctx, c, a, size), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("device 0");
    assert_last_error_contains("device 2");
    assert_last_error_contains("peer_fallback");
    void *b = device_alloc(ctx, 1, size); /* a linked pair still copies */
    assert_ok(tidal_copy(ctx, b, a, size));
    assert_true(device_holds(ctx, b, size, 5));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_free(ctx, c));
    assert_ok(tidal_context_destroy(ctx));

    ctx = harness_context("runtime = \"sim\"\n[sim]\nprofile = \"pcie-switch2\"\ndevices = 3\ncapacity = \"1GiB\"\n");
    a = device_alloc(ctx, 0, size);
    c = device_alloc(ctx, 2, size);
    fill_device(ctx, a, size, 6);
    assert_ok(tidal_copy(ctx, c, a, size));
    assert_true(device_holds(ctx, c, size, 6));
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, c));
    assert_ok(tidal_context_destroy(ctx));

    /* peer_access = "off" with "error": the message says the configuration turned it off. */
    ctx = harness_context_format("%s[topology]\npeer_access = \"off\"\npeer_fallback = \"error\"\n", kSwitch);
    a = device_alloc(ctx, 0, size);
    b = device_alloc(ctx, 1, size);
    assert_status(tidal_copy(ctx, b, a, size), TIDAL_ERROR_NOT_SUPPORTED);
    assert_last_error_contains("peer_access = \"off\"");
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* A batch whose items name two devices each (both directions, and host ends). */
static void test_batch_across_devices(void **state)
{
    (void)state;
    tidal_context *ctx = harness_context(kSwitch);
    const size_t size = 256 * 1024;
    void *a = device_alloc(ctx, 0, 2 * size), *b = device_alloc(ctx, 1, 2 * size);
    fill_device(ctx, a, size, 11);
    fill_device(ctx, (char *)b + size, size, 12);
    tidal_copy_item items[2] = {TIDAL_COPY_ITEM_INIT, TIDAL_COPY_ITEM_INIT};
    items[0].dst = b;
    items[0].src = a;
    items[0].size = size;
    items[1].dst = (char *)a + size;
    items[1].src = (char *)b + size;
    items[1].size = size;
    assert_ok(tidal_copy_batch(ctx, items, 2, NULL));
    assert_true(device_holds(ctx, b, size, 11));
    assert_true(device_holds(ctx, (char *)a + size, size, 12));
    assert_int_equal(peer_of(ctx, 0, 1).enabled, 1);
    assert_ok(tidal_free(ctx, a));
    assert_ok(tidal_free(ctx, b));
    assert_ok(tidal_context_destroy(ctx));
}

/* Two contexts on one device: each copies between its own buffer and the other's. */
static void test_two_contexts_one_device(void **state)
{
    tidal_context *one = *state;
    tidal_context *two = harness_context("runtime = \"sim\"\n");
    const size_t size = 5 * MIB + 3;
    void *a = device_alloc(one, 0, size), *b = device_alloc(two, 0, size);
    fill_device(one, a, size, 21);
    assert_ok(tidal_copy(two, b, a, size)); /* `a` is not `two`'s: the runtime says what it is */
    assert_true(device_holds(two, b, size, 21));
    fill_device(two, b, size, 22);
    assert_ok(tidal_copy(one, a, b, size));
    assert_true(device_holds(one, a, size, 22));
    assert_ok(tidal_free(two, b));
    assert_ok(tidal_context_destroy(two));
    assert_ok(tidal_free(one, a));
}

static void test_bad_topology_settings(void **state)
{
    (void)state;
    char *message = harness_context_fails("runtime = \"sim\"\n[topology]\npeer_access = \"on\"\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "peer_access");
    free(message);
    message = harness_context_fails("runtime = \"sim\"\n[topology]\npeer_fallback = \"host\"\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "peer_fallback");
    free(message);
    message = harness_context_fails("runtime = \"sim\"\n[topology]\nnuma = true\n", TIDAL_ERROR_CONFIG);
    assert_contains(message, "numa_bind");
    free(message);
    /* A profile whose link names a device its machine does not have. */
    char *dir = harness_temp_dir();
    char *config = profile_config(dir, "devices = 2\nlink = [{ between = [0, 5], type = \"xgmi\", bandwidth = 50, latency = 1 }]\n");
    message = harness_context_fails(config, TIDAL_ERROR_CONFIG);
    assert_contains(message, "topology.link[0].between");
    free(message);
    free(config);
    config = profile_config(dir, "devices = 2\nnuma_nodes = [0]\n");
    message = harness_context_fails(config, TIDAL_ERROR_CONFIG);
    assert_contains(message, "one per device");
    free(message);
    free(config);
    harness_remove_dir(dir);
    free(dir);
}

/* Devices on host NUMA node 0 (the profile says so; this machine has a node 0): the node and its
 * CPUs reach device info, pinned memory for a device and the staging ring are bound there, and
 * staged copies are right. A node the machine lacks (7) makes binding fail: a warning, not an
 * error; numa_bind = false binds nothing. */
static void test_numa_bound_staging(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    const char *variants[] = {"devices = 2\nnuma_nodes = [0, 0]\n", "devices = 2\nnuma_nodes = [0, 7]\n"};
    for (int v = 0; v < 2; ++v)
        for (int bind = 0; bind < 2; ++bind) {
            char *base = profile_config(dir, variants[v]);
            tidal_context *ctx = harness_context_format("%s[copy]\nchunk_size = \"64KiB\"\n[topology]\nnuma_bind = %s\n", base,
                                                        bind ? "true" : "false");
            free(base);
            tidal_device_info info = TIDAL_DEVICE_INFO_INIT;
            assert_ok(tidal_device_info_get(ctx, 0, &info));
            assert_int_equal(info.numa_node, 0);
            assert_true(info.local_cpus[0] != '\0'); /* hwloc's CPUs of node 0 */
            for (int32_t d = 0; d < 2; ++d) {
                tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
                desc.kind = TIDAL_KIND_PINNED;
                desc.device = d;
                void *pinned = NULL;
                assert_ok(tidal_alloc(ctx, 1 * MIB, &desc, &pinned));
                desc.kind = TIDAL_KIND_PAGEABLE;
                void *pageable = NULL;
                assert_ok(tidal_alloc(ctx, 1 * MIB, &desc, &pageable));
                harness_fill(pageable, 1 * MIB, (unsigned)(30 + d));
                void *dev = device_alloc(ctx, d, 1 * MIB);
                unsigned char *host = malloc(1 * MIB);
                assert_non_null(host);
                harness_fill(host, 1 * MIB, (unsigned)(40 + d));
                assert_ok(tidal_copy(ctx, dev, host, 1 * MIB)); /* staged through the node's ring */
                memset(host, 0, 1 * MIB);
                assert_ok(tidal_copy(ctx, host, dev, 1 * MIB));
                assert_true(harness_holds(host, 1 * MIB, (unsigned)(40 + d)));
                assert_ok(tidal_copy(ctx, pinned, pageable, 1 * MIB));
                assert_true(harness_holds(pinned, 1 * MIB, (unsigned)(30 + d)));
                free(host);
                assert_ok(tidal_free(ctx, dev));
                assert_ok(tidal_free(ctx, pinned));
                assert_ok(tidal_free(ctx, pageable));
            }
            assert_ok(tidal_context_destroy(ctx));
        }
    harness_remove_dir(dir);
    free(dir);
}

/* Memory tidal makes for device 1 goes on device 1's NUMA node, not device 0's: with device 1 on
 * a node this machine lacks (7), making it logs that it could not be placed there (a warning;
 * the work still succeeds). The host side is pinned memory for device 0 (node 0): a copy from
 * pageable memory would stage through device 1's ring, bound to node 7 too, and log the same
 * warning. stderr is read back from a file. */
typedef void (*node7_work)(tidal_context *ctx, unsigned char *host);

static void expect_node7_warning(node7_work work)
{
    char *dir = harness_temp_dir();
    char *base = profile_config(dir, "devices = 2\nnuma_nodes = [0, 7]\n");
    /* The suite's TIDAL_LOG_LEVEL=error would hide the warning (the environment wins). */
    const char *level = getenv("TIDAL_LOG_LEVEL");
    char *saved_level = level ? harness_format("%s", level) : NULL;
    setenv("TIDAL_LOG_LEVEL", "warn", 1);
    tidal_context *ctx = harness_context_format("%s[topology]\nnuma_bind = true\n", base);
    if (saved_level)
        setenv("TIDAL_LOG_LEVEL", saved_level, 1);
    else
        unsetenv("TIDAL_LOG_LEVEL");
    free(saved_level);
    free(base);
    tidal_alloc_desc hdesc = TIDAL_ALLOC_DESC_INIT;
    hdesc.kind = TIDAL_KIND_PINNED;
    hdesc.device = 0;
    unsigned char *host = NULL;
    assert_ok(tidal_alloc(ctx, 4 * MIB, &hdesc, (void **)&host));
    char *log_path = harness_format("%s/stderr.txt", dir);
    fflush(stderr);
    const int saved = dup(2);
    FILE *log = fopen(log_path, "w");
    assert_non_null(log);
    dup2(fileno(log), 2);
    work(ctx, host);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(log);
    FILE *in = fopen(log_path, "r");
    assert_non_null(in);
    char text[4096] = {0};
    size_t n = fread(text, 1, sizeof text - 1, in);
    text[n] = '\0';
    fclose(in);
    assert_true(harness_contains(text, "for device 1 on NUMA node 7", 0));
    assert_ok(tidal_free(ctx, host));
    assert_ok(tidal_context_destroy(ctx));
    free(log_path);
    harness_remove_dir(dir);
    free(dir);
}

/* An elastic allocation's host home, made by its first offload. */
static void elastic_round_trip(tidal_context *ctx, unsigned char *host)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_ELASTIC;
    desc.device = 1;
    void *p = NULL;
    assert_ok(tidal_alloc(ctx, 4 * MIB, &desc, &p));
    harness_fill(host, 4 * MIB, 77);
    assert_ok(tidal_copy(ctx, p, host, 4 * MIB));
    assert_ok(tidal_offload_range(ctx, p, 4 * MIB, 0, NULL, NULL));
    assert_ok(tidal_restore_range(ctx, p, 4 * MIB, 0, NULL, NULL));
    memset(host, 0, 4 * MIB);
    assert_ok(tidal_copy(ctx, host, p, 4 * MIB));
    assert_true(harness_holds(host, 4 * MIB, 77));
    assert_ok(tidal_free(ctx, p));
}

/* A batch of small copies into device 1's memory, gathered in its staging buffer. */
static void batch_into_device1(tidal_context *ctx, unsigned char *host)
{
    void *d = device_alloc(ctx, 1, 64 * 1024);
    harness_fill(host, 64 * 1024, 78);
    tidal_copy_item items[16];
    for (int i = 0; i < 16; ++i) {
        items[i] = (tidal_copy_item)TIDAL_COPY_ITEM_INIT;
        items[i].dst = (char *)d + i * 4096;
        items[i].src = host + i * 4096;
        items[i].size = 4096;
    }
    assert_ok(tidal_copy_batch(ctx, items, 16, NULL));
    memset(host, 0, 64 * 1024);
    assert_ok(tidal_copy(ctx, host, d, 64 * 1024));
    assert_true(harness_holds(host, 64 * 1024, 78));
    assert_ok(tidal_free(ctx, d));
}

static void test_elastic_home_on_device_node(void **state)
{
    (void)state;
    expect_node7_warning(elastic_round_trip);
}

static void test_batch_staging_on_device_node(void **state)
{
    (void)state;
    expect_node7_warning(batch_into_device1);
}

int main(void)
{
    harness_isolate_environment();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_pcie_switch),
        cmocka_unit_test(test_matrix_xgmi_mesh),
        HARNESS_SIM_TEST(test_matrix_of_one),
        cmocka_unit_test(test_peer_copy_charged_at_link_rate),
        cmocka_unit_test(test_peer_access_off_stages),
        cmocka_unit_test(test_no_peer_path_fallback_and_error),
        cmocka_unit_test(test_batch_across_devices),
        HARNESS_SIM_TEST(test_two_contexts_one_device),
        cmocka_unit_test(test_bad_topology_settings),
        cmocka_unit_test(test_numa_bound_staging),
        cmocka_unit_test(test_elastic_home_on_device_node),
        cmocka_unit_test(test_batch_staging_on_device_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
