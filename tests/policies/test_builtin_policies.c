/* The built-in policies `xnack` and `lru` tested as the core sees them: each .so is dlopened,
 * negotiated and initialised with a fake options view, and its hooks are called with crafted
 * requests. No libtidal is involved, so a failure here is the plugin's own.
 *
 * The plugins are found in the folder named by argv[1] or TIDAL_TEST_POLICY_DIR, as
 * DIR/NAME/tidal-policy-NAME.so (a meson build tree's policies/) or DIR/tidal-policy-NAME.so. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dlfcn.h>

#include "tidal/policy.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/* =====================================================================================
 * A fake options view: a flat key/value table with the core's type rules
 * =================================================================================== */
typedef enum value_type { V_BOOL, V_INT, V_DOUBLE, V_STRING } value_type;

typedef struct option {
    const char *key;
    value_type type;
    int64_t i; /* V_BOOL, V_INT */
    double d;
    const char *s;
} option;

#define OPT_BOOL(k, v) {(k), V_BOOL, (v), 0.0, NULL}
#define OPT_INT(k, v) {(k), V_INT, (v), 0.0, NULL}
#define OPT_DOUBLE(k, v) {(k), V_DOUBLE, 0, (v), NULL}
#define OPT_STRING(k, v) {(k), V_STRING, 0, 0.0, (v)}

struct tidal_options {
    const option *items;
    size_t count;
    int errors;
    char last_key[64];
    char last_message[256];
};

static void fake_error(const tidal_options *view, const char *key, const char *message)
{
    tidal_options *v = (tidal_options *)view; /* the test owns every view it hands out */
    v->errors++;
    snprintf(v->last_key, sizeof v->last_key, "%s", key ? key : "");
    snprintf(v->last_message, sizeof v->last_message, "%s", message ? message : "");
}

static const option *fake_find(const tidal_options *view, const char *key)
{
    for (size_t i = 0; i < view->count; ++i)
        if (strcmp(view->items[i].key, key) == 0)
            return &view->items[i];
    return NULL;
}

static tidal_status fake_mismatch(const tidal_options *view, const char *key, const char *wanted)
{
    char msg[128];
    snprintf(msg, sizeof msg, "'%s' must be %s", key, wanted);
    fake_error(view, key, msg);
    return TIDAL_ERROR_CONFIG;
}

static tidal_status fake_get_string(const tidal_options *view, const char *key, const char **out)
{
    const option *o = fake_find(view, key);
    if (!o)
        return TIDAL_ERROR_NOT_FOUND;
    if (o->type != V_STRING)
        return fake_mismatch(view, key, "a string");
    *out = o->s;
    return TIDAL_OK;
}

static tidal_status fake_get_int(const tidal_options *view, const char *key, int64_t *out)
{
    const option *o = fake_find(view, key);
    if (!o)
        return TIDAL_ERROR_NOT_FOUND;
    if (o->type != V_INT)
        return fake_mismatch(view, key, "an integer");
    *out = o->i;
    return TIDAL_OK;
}

static tidal_status fake_get_double(const tidal_options *view, const char *key, double *out)
{
    const option *o = fake_find(view, key);
    if (!o)
        return TIDAL_ERROR_NOT_FOUND;
    if (o->type != V_DOUBLE && o->type != V_INT)
        return fake_mismatch(view, key, "a number");
    *out = o->type == V_DOUBLE ? o->d : (double)o->i;
    return TIDAL_OK;
}

static tidal_status fake_get_bool(const tidal_options *view, const char *key, int *out)
{
    const option *o = fake_find(view, key);
    if (!o)
        return TIDAL_ERROR_NOT_FOUND;
    if (o->type != V_BOOL)
        return fake_mismatch(view, key, "a boolean");
    *out = o->i ? 1 : 0;
    return TIDAL_OK;
}

/* Integers, or strings "N", "NKiB", "NMiB", "NGiB" (enough for these tests). */
static tidal_status fake_get_size(const tidal_options *view, const char *key, uint64_t *out)
{
    const option *o = fake_find(view, key);
    if (!o)
        return TIDAL_ERROR_NOT_FOUND;
    if (o->type == V_INT) {
        if (o->i < 0)
            return fake_mismatch(view, key, "not negative");
        *out = (uint64_t)o->i;
        return TIDAL_OK;
    }
    if (o->type != V_STRING)
        return fake_mismatch(view, key, "a size");
    char *end = NULL;
    unsigned long long n = strtoull(o->s, &end, 10);
    uint64_t unit = 1;
    if (strcmp(end, "KiB") == 0)
        unit = KiB;
    else if (strcmp(end, "MiB") == 0)
        unit = MiB;
    else if (strcmp(end, "GiB") == 0)
        unit = GiB;
    else if (*end != '\0' || end == o->s)
        return fake_mismatch(view, key, "a size");
    *out = (uint64_t)n * unit;
    return TIDAL_OK;
}

static size_t fake_array_length(const tidal_options *view, const char *key)
{
    (void)view;
    (void)key;
    return 0;
}

static tidal_status fake_get_string_at(const tidal_options *view, const char *key, size_t index,
                                       const char **out)
{
    (void)view;
    (void)key;
    (void)index;
    (void)out;
    return TIDAL_ERROR_NOT_FOUND;
}

static const tidal_options *fake_table(const tidal_options *view, const char *key, size_t index)
{
    (void)view;
    (void)key;
    (void)index;
    return NULL;
}

static size_t fake_key_count(const tidal_options *view) { return view->count; }

static const char *fake_key_at(const tidal_options *view, size_t index)
{
    return index < view->count ? view->items[index].key : NULL;
}

static const tidal_options_api fake_api = {
    sizeof(tidal_options_api), fake_get_string, fake_get_int, fake_get_double, fake_get_bool,
    fake_get_size, fake_array_length, fake_get_string_at, fake_table, fake_key_count, fake_key_at,
    fake_error,
};

/* =====================================================================================
 * Systems
 * =================================================================================== */
#define F_MANAGED TIDAL_DEVICE_FLAG_MANAGED
#define F_CONCURRENT TIDAL_DEVICE_FLAG_CONCURRENT_MANAGED
#define F_PAGEABLE TIDAL_DEVICE_FLAG_PAGEABLE_ACCESS
#define F_MIGRATES TIDAL_DEVICE_FLAG_MIGRATES_ON_FAULT
#define F_FINE TIDAL_DEVICE_FLAG_FINE_GRAINED
#define F_SIM TIDAL_DEVICE_FLAG_SIMULATED

#define DEVICE(i, f, x) {sizeof(tidal_policy_device), (i), (f), (x), 80 * GiB, 64 * KiB}

static const tidal_policy_device dev_nvidia[] = {DEVICE(0, F_MANAGED | F_CONCURRENT | F_PAGEABLE | F_MIGRATES, TIDAL_XNACK_NOT_APPLICABLE)};
static const tidal_policy_device dev_amd_on[] = {DEVICE(0, F_MANAGED | F_CONCURRENT | F_PAGEABLE | F_MIGRATES | F_FINE, TIDAL_XNACK_ON)};
/* With XNACK off AMD still reports managed and concurrent managed access. */
static const tidal_policy_device dev_amd_off[] = {DEVICE(0, F_MANAGED | F_CONCURRENT | F_FINE, TIDAL_XNACK_OFF)};
static const tidal_policy_device dev_sim_on[] = {DEVICE(0, F_SIM | F_MANAGED | F_CONCURRENT | F_MIGRATES, TIDAL_XNACK_ON)};
static const tidal_policy_device dev_sim_off[] = {DEVICE(0, F_SIM | F_MANAGED, TIDAL_XNACK_OFF)};
static const tidal_policy_device dev_no_managed[] = {DEVICE(0, 0u, TIDAL_XNACK_NOT_APPLICABLE)};
/* Device 0 without migration, device 1 with it: the request's device must be the one looked at. */
static const tidal_policy_device dev_mixed[] = {
    DEVICE(0, F_MANAGED | F_CONCURRENT | F_FINE, TIDAL_XNACK_OFF),
    DEVICE(1, F_MANAGED | F_CONCURRENT | F_PAGEABLE | F_MIGRATES, TIDAL_XNACK_NOT_APPLICABLE)};

static const tidal_policy_system sys_nvidia = {sizeof(tidal_policy_system), "cuda", 1, dev_nvidia, 0u, NULL};
static const tidal_policy_system sys_amd_on = {sizeof(tidal_policy_system), "hip", 1, dev_amd_on, 0u, NULL};
static const tidal_policy_system sys_amd_off = {sizeof(tidal_policy_system), "hip", 1, dev_amd_off, 0u, NULL};
static const tidal_policy_system sys_sim_on = {sizeof(tidal_policy_system), "sim", 1, dev_sim_on, 0u, NULL};
static const tidal_policy_system sys_sim_off = {sizeof(tidal_policy_system), "sim", 1, dev_sim_off, 0u, NULL};
static const tidal_policy_system sys_no_managed = {sizeof(tidal_policy_system), "sim", 1, dev_no_managed, 0u, NULL};
static const tidal_policy_system sys_mixed = {sizeof(tidal_policy_system), "cuda", 2, dev_mixed, 0u, NULL};
static const tidal_policy_system sys_empty = {sizeof(tidal_policy_system), "sim", 0, NULL, 0u, NULL};

static const tidal_policy_system *const systems_migrating[] = {&sys_nvidia, &sys_amd_on, &sys_sim_on};
static const tidal_policy_system *const systems_static[] = {&sys_amd_off, &sys_sim_off};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* =====================================================================================
 * Loading
 * =================================================================================== */
typedef struct plugin {
    void *handle;
    tidal_policy_negotiate_fn negotiate;
    tidal_policy_hooks hooks;
} plugin;

static const char *policy_dir;
static plugin xnack, lru;

static int load(const char *name, plugin *p)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/tidal-policy-%s.so", policy_dir, name, name);
    p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->handle) {
        snprintf(path, sizeof path, "%s/tidal-policy-%s.so", policy_dir, name);
        p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!p->handle) {
        fprintf(stderr, "cannot load the '%s' policy from %s: %s\n", name, policy_dir, dlerror());
        return 0;
    }
    /* POSIX guarantees the object-to-function pointer conversion dlsym relies on. */
    *(void **)&p->negotiate = dlsym(p->handle, TIDAL_POLICY_ENTRY_SYMBOL);
    if (!p->negotiate) {
        fprintf(stderr, "%s does not export %s\n", path, TIDAL_POLICY_ENTRY_SYMBOL);
        return 0;
    }
    uint32_t abi = 0;
    memset(&p->hooks, 0, sizeof p->hooks);
    p->hooks.struct_size = sizeof p->hooks;
    if (p->negotiate(TIDAL_POLICY_ABI_VERSION, &abi, &p->hooks) != TIDAL_OK || abi != 1) {
        fprintf(stderr, "%s did not negotiate policy ABI 1\n", path);
        return 0;
    }
    return 1;
}

/* Initialises `p` on `view`; returns the state, failing the test if init fails. */
static void *init_with(const plugin *p, tidal_options *view, const tidal_policy_system *sys)
{
    tidal_policy_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.instance_name = p->hooks.name;
    args.options = view;
    args.options_api = &fake_api;
    args.system = sys;
    void *state = NULL;
    tidal_status st = p->hooks.init(&args, &state);
    if (st != TIDAL_OK)
        print_error("init failed: %d, last error at '%s': %s\n", (int)st, view->last_key, view->last_message);
    assert_int_equal(st, TIDAL_OK);
    assert_int_equal(view->errors, 0);
    return state;
}

static void *init_options(const plugin *p, const option *items, size_t count)
{
    tidal_options view = {items, count, 0, {0}, {0}};
    return init_with(p, &view, &sys_nvidia);
}

static void *init_default(const plugin *p) { return init_options(p, NULL, 0); }

/* Init must fail, reporting through api->error at `key`. */
static void expect_init_fails(const plugin *p, const option *items, size_t count, const char *key)
{
    tidal_options view = {items, count, 0, {0}, {0}};
    tidal_policy_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.instance_name = p->hooks.name;
    args.options = &view;
    args.options_api = &fake_api;
    args.system = &sys_nvidia;
    void *state = NULL;
    tidal_status st = p->hooks.init(&args, &state);
    if (st == TIDAL_OK)
        p->hooks.fini(state);
    assert_int_not_equal(st, TIDAL_OK);
    assert_true(view.errors >= 1);
    assert_string_equal(view.last_key, key);
    assert_true(view.last_message[0] != '\0');
}

static int contains(const char *const *list, const char *s)
{
    for (; list && *list; ++list)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

static size_t list_length(const char *const *list)
{
    size_t n = 0;
    while (list && list[n])
        ++n;
    return n;
}

/* =====================================================================================
 * xnack: negotiation and options
 * =================================================================================== */
static void xnack_negotiates(void **unused)
{
    (void)unused;
    assert_string_equal(xnack.hooks.name, "xnack");
    assert_non_null(xnack.hooks.description);
    assert_non_null(xnack.hooks.init);
    assert_non_null(xnack.hooks.fini);
    assert_non_null(xnack.hooks.place);
    assert_non_null(xnack.hooks.plan_prefetch);
    assert_null(xnack.hooks.recover);
    assert_null(xnack.hooks.evict); /* eviction is lru's or the core's */
    assert_int_equal(list_length(xnack.hooks.option_keys), 6);
    assert_true(contains(xnack.hooks.option_keys, "elastic_under_budget"));
    assert_true(contains(xnack.hooks.option_keys, "elastic_min_size"));
    assert_true(contains(xnack.hooks.option_keys, "demand_paging"));
    assert_true(contains(xnack.hooks.option_keys, "chunk_size"));
    assert_true(contains(xnack.hooks.option_keys, "host_heavy_accessed_by"));
    assert_true(contains(xnack.hooks.option_keys, "pinned_streaming"));
}

static void negotiate_refuses_abi_0(void **unused)
{
    (void)unused;
    tidal_policy_hooks hooks;
    uint32_t abi = 77;
    memset(&hooks, 0, sizeof hooks);
    hooks.struct_size = sizeof hooks;
    assert_int_equal(xnack.negotiate(0, &abi, &hooks), TIDAL_ERROR_NOT_SUPPORTED);
    assert_int_equal(lru.negotiate(0, &abi, &hooks), TIDAL_ERROR_NOT_SUPPORTED);
}

/* A core from before plan_prefetch/evict: nothing past `recover` may be written. */
static void negotiate_with_old_core(void **unused)
{
    (void)unused;
    const size_t old_size = offsetof(tidal_policy_hooks, plan_prefetch);
    tidal_policy_hooks hooks;
    uint32_t abi = 0;
    memset(&hooks, 0xA5, sizeof hooks);
    hooks.struct_size = old_size;
    assert_int_equal(xnack.negotiate(1, &abi, &hooks), TIDAL_OK);
    assert_int_equal(abi, 1);
    assert_non_null(hooks.place);
    const unsigned char *tail = (const unsigned char *)&hooks + old_size;
    for (size_t i = 0; i < sizeof hooks - old_size; ++i)
        assert_int_equal(tail[i], 0xA5);

    /* lru has no decision an old core could ask for. */
    memset(&hooks, 0xA5, sizeof hooks);
    hooks.struct_size = old_size;
    assert_int_equal(lru.negotiate(1, &abi, &hooks), TIDAL_ERROR_NOT_SUPPORTED);
    for (size_t i = 0; i < sizeof hooks - old_size; ++i)
        assert_int_equal(tail[i], 0xA5);
}

/* A future core offering ABI 2 still gets 1. */
static void negotiate_with_newer_core(void **unused)
{
    (void)unused;
    tidal_policy_hooks hooks;
    uint32_t abi = 0;
    memset(&hooks, 0, sizeof hooks);
    hooks.struct_size = sizeof hooks;
    assert_int_equal(xnack.negotiate(2, &abi, &hooks), TIDAL_OK);
    assert_int_equal(abi, 1);
    assert_int_equal(lru.negotiate(2, &abi, &hooks), TIDAL_OK);
    assert_int_equal(abi, 1);
}

static void xnack_bad_options(void **unused)
{
    (void)unused;
    const option demand_string[] = {OPT_STRING("demand_paging", "yes")};
    expect_init_fails(&xnack, demand_string, 1, "demand_paging");
    const option chunk_bool[] = {OPT_BOOL("chunk_size", 1)};
    expect_init_fails(&xnack, chunk_bool, 1, "chunk_size");
    const option chunk_odd[] = {OPT_INT("chunk_size", 1000)};
    expect_init_fails(&xnack, chunk_odd, 1, "chunk_size");
    const option chunk_huge[] = {OPT_STRING("chunk_size", "2GiB")};
    expect_init_fails(&xnack, chunk_huge, 1, "chunk_size");
    const option chunk_negative[] = {OPT_INT("chunk_size", -4096)};
    expect_init_fails(&xnack, chunk_negative, 1, "chunk_size");
    const option chunk_garbage[] = {OPT_STRING("chunk_size", "lots")};
    expect_init_fails(&xnack, chunk_garbage, 1, "chunk_size");
    const option accessed_int[] = {OPT_INT("host_heavy_accessed_by", 1)};
    expect_init_fails(&xnack, accessed_int, 1, "host_heavy_accessed_by");
    const option pinned_double[] = {OPT_DOUBLE("pinned_streaming", 0.5)};
    expect_init_fails(&xnack, pinned_double, 1, "pinned_streaming");
    const option elastic_string[] = {OPT_STRING("elastic_under_budget", "yes")};
    expect_init_fails(&xnack, elastic_string, 1, "elastic_under_budget");
    const option min_garbage[] = {OPT_STRING("elastic_min_size", "lots")};
    expect_init_fails(&xnack, min_garbage, 1, "elastic_min_size");

    /* Every mistake is reported in one run, not only the first. */
    const option two[] = {OPT_INT("demand_paging", 1), OPT_STRING("pinned_streaming", "no")};
    tidal_options view = {two, 2, 0, {0}, {0}};
    tidal_policy_init_args args = {sizeof args, "xnack", &view, &fake_api, &sys_nvidia};
    void *state = NULL;
    assert_int_not_equal(xnack.hooks.init(&args, &state), TIDAL_OK);
    assert_int_equal(view.errors, 2);
}

static void xnack_good_options(void **unused)
{
    (void)unused;
    const option all[] = {OPT_BOOL("demand_paging", 1), OPT_STRING("chunk_size", "4MiB"),
                          OPT_BOOL("host_heavy_accessed_by", 0), OPT_BOOL("pinned_streaming", 1),
                          OPT_BOOL("elastic_under_budget", 0), OPT_STRING("elastic_min_size", "64MiB")};
    xnack.hooks.fini(init_options(&xnack, all, COUNT(all)));
    const option zero[] = {OPT_INT("chunk_size", 0)};
    xnack.hooks.fini(init_options(&xnack, zero, 1));
}

/* =====================================================================================
 * xnack: place
 * =================================================================================== */
static size_t request_size = 1 * MiB; /* of every place() request */

static tidal_policy_verdict place(const plugin *p, void *state, const tidal_policy_system *sys, tidal_kind kind,
                                  int32_t device, uint32_t hints, tidal_placement *out)
{
    tidal_place_request req;
    memset(&req, 0, sizeof req);
    req.struct_size = sizeof req;
    req.size = request_size;
    req.kind = kind;
    req.device = device;
    req.hints = hints;
    req.tag = "";
    req.system = sys;
    /* As the core prepares it. */
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->device = TIDAL_DEVICE_DEFAULT;
    return p->hooks.place(state, &req, out);
}

static void expect_placed(void *state, const tidal_policy_system *sys, int32_t device, uint32_t hints,
                          tidal_kind kind, int32_t placed_device, uint32_t advice, const char *reason_part)
{
    tidal_placement out;
    assert_int_equal(place(&xnack, state, sys, TIDAL_KIND_AUTO, device, hints, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.kind, kind);
    assert_int_equal(out.device, placed_device);
    assert_int_equal(out.advice, advice);
    assert_int_equal(out.flags, TIDAL_PLACEMENT_CACHEABLE); /* a function of the request alone */
    assert_non_null(strstr(out.reason, reason_part));
}

#define PREF_DEV TIDAL_ADVICE_PREFERRED_DEVICE
#define PREF_HOST TIDAL_ADVICE_PREFERRED_HOST
#define ACC_BY TIDAL_ADVICE_ACCESSED_BY_DEVICE
#define RM TIDAL_ADVICE_READ_MOSTLY

static void xnack_on_gpu_buffers_managed(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    for (size_t s = 0; s < COUNT(systems_migrating); ++s) {
        const tidal_policy_system *sys = systems_migrating[s];
        expect_placed(st, sys, TIDAL_DEVICE_DEFAULT, 0, TIDAL_KIND_MANAGED, 0, PREF_DEV, "xnack+");
        expect_placed(st, sys, 0, TIDAL_HINT_DEVICE_ONLY, TIDAL_KIND_MANAGED, 0, PREF_DEV, "xnack+");
        expect_placed(st, sys, 0, TIDAL_HINT_READ_MOSTLY, TIDAL_KIND_MANAGED, 0, PREF_DEV | RM, "read-mostly");
        expect_placed(st, sys, 0, TIDAL_HINT_STREAMING | TIDAL_HINT_TEMPORARY, TIDAL_KIND_MANAGED, 0, PREF_DEV,
                      "xnack+");
        /* The host hints do not count when the host never touches it. */
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_READ | TIDAL_HINT_DEVICE_ONLY, TIDAL_KIND_MANAGED, 0, PREF_DEV,
                      "xnack+");
    }
    xnack.hooks.fini(st);
}

static void xnack_on_host_heavy(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    for (size_t s = 0; s < COUNT(systems_migrating); ++s) {
        const tidal_policy_system *sys = systems_migrating[s];
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, 0, PREF_HOST | ACC_BY, "host-heavy");
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_WRITE, TIDAL_KIND_MANAGED, 0, PREF_HOST | ACC_BY, "host-heavy");
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_READ | TIDAL_HINT_READ_MOSTLY, TIDAL_KIND_MANAGED, 0,
                      PREF_HOST | ACC_BY | RM, "host-heavy");
        /* pinned_streaming concerns devices without migration only. */
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_WRITE | TIDAL_HINT_STREAMING, TIDAL_KIND_MANAGED, 0,
                      PREF_HOST | ACC_BY, "host-heavy");
    }
    xnack.hooks.fini(st);

    const option no_accessed_by[] = {OPT_BOOL("host_heavy_accessed_by", 0), OPT_BOOL("pinned_streaming", 1)};
    st = init_options(&xnack, no_accessed_by, COUNT(no_accessed_by));
    expect_placed(st, &sys_nvidia, 0, TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, 0, PREF_HOST, "host-heavy");
    expect_placed(st, &sys_nvidia, 0, TIDAL_HINT_HOST_READ | TIDAL_HINT_STREAMING, TIDAL_KIND_MANAGED, 0, PREF_HOST,
                  "host-heavy");
    expect_placed(st, &sys_nvidia, 0, 0, TIDAL_KIND_MANAGED, 0, PREF_DEV, "xnack+");
    xnack.hooks.fini(st);
}

static void xnack_off_device_memory(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    for (size_t s = 0; s < COUNT(systems_static); ++s) {
        const tidal_policy_system *sys = systems_static[s];
        expect_placed(st, sys, TIDAL_DEVICE_DEFAULT, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-: device memory + staged copies");
        expect_placed(st, sys, 0, TIDAL_HINT_READ_MOSTLY, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
        expect_placed(st, sys, 0, TIDAL_HINT_DEVICE_ONLY, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
        expect_placed(st, sys, 0, TIDAL_HINT_STREAMING, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_WRITE | TIDAL_HINT_DEVICE_ONLY, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
        /* Managed only for host-heavy buffers, kept on the host. */
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, 0, PREF_HOST | ACC_BY, "xnack-: host-heavy");
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_WRITE | TIDAL_HINT_READ_MOSTLY, TIDAL_KIND_MANAGED, 0,
                      PREF_HOST | ACC_BY | RM, "xnack-: host-heavy");
        /* Streaming host buffers stay managed unless pinned_streaming says otherwise. */
        expect_placed(st, sys, 0, TIDAL_HINT_HOST_WRITE | TIDAL_HINT_STREAMING, TIDAL_KIND_MANAGED, 0,
                      PREF_HOST | ACC_BY, "xnack-: host-heavy");
    }
    xnack.hooks.fini(st);
}

/* The budget a test system reports, per device; the core reads its own. */
static uint64_t test_budgets[2];
static int budget_calls;
static uint64_t test_budget(const tidal_policy_system *sys, int32_t device)
{
    (void)sys;
    ++budget_calls;
    return device >= 0 && device < 2 ? test_budgets[device] : 0;
}

static const tidal_policy_system sys_amd_off_vmm = {sizeof(tidal_policy_system), "hip", 1, dev_amd_off,
                                                    TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY, test_budget};
static const tidal_policy_system sys_sim_off_vmm = {sizeof(tidal_policy_system), "sim", 1, dev_sim_off,
                                                    TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY, test_budget};
static const tidal_policy_system sys_sim_on_vmm = {sizeof(tidal_policy_system), "sim", 1, dev_sim_on,
                                                   TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY, test_budget};
/* A runtime without a virtual-memory API, and a core older than the budget fields. */
static const tidal_policy_system sys_amd_off_no_vmm = {sizeof(tidal_policy_system), "hip", 1, dev_amd_off, 0u,
                                                       test_budget};
static const tidal_policy_system sys_amd_off_old_core = {offsetof(tidal_policy_system, features), "hip", 1,
                                                         dev_amd_off, TIDAL_POLICY_SYSTEM_VIRTUAL_MEMORY, test_budget};

/* As expect_placed, with the placement flags the answer must carry. */
static void expect_placed_flags(void *state, const tidal_policy_system *sys, uint32_t hints, tidal_kind kind,
                                uint32_t flags, const char *reason_part)
{
    tidal_placement out;
    assert_int_equal(place(&xnack, state, sys, TIDAL_KIND_AUTO, 0, hints, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.kind, kind);
    assert_int_equal(out.device, 0);
    assert_int_equal(out.flags, flags);
    assert_non_null(strstr(out.reason, reason_part));
}

static void xnack_off_elastic_under_budget(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    request_size = 2 * MiB; /* elastic_min_size's default: the smallest elastic buffer */
    const tidal_policy_system *const off[] = {&sys_amd_off_vmm, &sys_sim_off_vmm};
    for (size_t s = 0; s < COUNT(off); ++s) {
        /* No budget: device memory, but the answer depends on the budget, so it is not cacheable. */
        test_budgets[0] = 0;
        budget_calls = 0;
        expect_placed_flags(st, off[s], 0, TIDAL_KIND_DEVICE, 0, "xnack-: device memory");
        assert_int_equal(budget_calls, 1);
        test_budgets[0] = 1ull << 30;
        expect_placed_flags(st, off[s], 0, TIDAL_KIND_ELASTIC, 0, "xnack-, device budget: elastic");
        expect_placed_flags(st, off[s], TIDAL_HINT_READ_MOSTLY | TIDAL_HINT_DEVICE_ONLY, TIDAL_KIND_ELASTIC, 0,
                            "elastic");
        /* Smaller buffers would waste most of a chunk: device memory, whatever the budget. */
        request_size = 2 * MiB - 4096;
        expect_placed_flags(st, off[s], 0, TIDAL_KIND_DEVICE, TIDAL_PLACEMENT_CACHEABLE, "xnack-: device memory");
        request_size = 2 * MiB;
        /* Host-heavy buffers: the host cannot read elastic memory; those answers stay cacheable. */
        expect_placed_flags(st, off[s], TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, TIDAL_PLACEMENT_CACHEABLE,
                            "xnack-: host-heavy");
    }
    /* The budget of the requested device counts. */
    test_budgets[0] = 0;
    test_budgets[1] = 1ull << 30;
    expect_placed_flags(st, &sys_amd_off_vmm, 0, TIDAL_KIND_DEVICE, 0, "xnack-: device memory");
    test_budgets[1] = 0;

    /* Where pages migrate, managed memory stays the answer, budget or not. */
    test_budgets[0] = 1ull << 30;
    expect_placed_flags(st, &sys_sim_on_vmm, 0, TIDAL_KIND_MANAGED, TIDAL_PLACEMENT_CACHEABLE, "xnack+");
    /* No virtual-memory API, or a core that cannot say: device memory, cacheable as before. */
    expect_placed_flags(st, &sys_amd_off_no_vmm, 0, TIDAL_KIND_DEVICE, TIDAL_PLACEMENT_CACHEABLE, "xnack-: device");
    budget_calls = 0;
    expect_placed_flags(st, &sys_amd_off_old_core, 0, TIDAL_KIND_DEVICE, TIDAL_PLACEMENT_CACHEABLE, "xnack-: device");
    assert_int_equal(budget_calls, 0);
    xnack.hooks.fini(st);

    /* elastic_under_budget = false: device memory whatever the budget. */
    const option no_elastic[] = {OPT_BOOL("elastic_under_budget", 0)};
    st = init_options(&xnack, no_elastic, 1);
    expect_placed_flags(st, &sys_amd_off_vmm, 0, TIDAL_KIND_DEVICE, TIDAL_PLACEMENT_CACHEABLE, "xnack-: device");
    xnack.hooks.fini(st);
    const option min_size[] = {OPT_STRING("elastic_min_size", "64MiB")};
    st = init_options(&xnack, min_size, 1);
    expect_placed_flags(st, &sys_amd_off_vmm, 0, TIDAL_KIND_DEVICE, TIDAL_PLACEMENT_CACHEABLE, "xnack-: device");
    request_size = 64 * MiB;
    expect_placed_flags(st, &sys_amd_off_vmm, 0, TIDAL_KIND_ELASTIC, 0, "elastic");
    xnack.hooks.fini(st);
    request_size = 1 * MiB;
    test_budgets[0] = 0;
}

static void xnack_off_pinned_streaming(void **unused)
{
    (void)unused;
    const option pinned[] = {OPT_BOOL("pinned_streaming", 1)};
    void *st = init_options(&xnack, pinned, 1);
    expect_placed(st, &sys_amd_off, TIDAL_DEVICE_DEFAULT, TIDAL_HINT_HOST_WRITE | TIDAL_HINT_STREAMING,
                  TIDAL_KIND_PINNED, TIDAL_DEVICE_HOST, 0, "pinned");
    /* An explicit device stays the pinned memory's affinity. */
    expect_placed(st, &sys_amd_off, 0, TIDAL_HINT_HOST_READ | TIDAL_HINT_STREAMING, TIDAL_KIND_PINNED, 0, 0, "pinned");
    /* Not host-heavy: still device memory. */
    expect_placed(st, &sys_amd_off, 0, TIDAL_HINT_STREAMING, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    expect_placed(st, &sys_amd_off, 0, TIDAL_HINT_HOST_READ | TIDAL_HINT_STREAMING | TIDAL_HINT_DEVICE_ONLY,
                  TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    /* Host-heavy without streaming: managed. */
    expect_placed(st, &sys_amd_off, 0, TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, 0, PREF_HOST | ACC_BY, "host-heavy");
    xnack.hooks.fini(st);
}

/* MANAGED and CONCURRENT_MANAGED are set on AMD with XNACK off: only MIGRATES_ON_FAULT counts,
 * and only with MANAGED (a device without managed memory cannot get it). */
static void xnack_flags_that_are_no_proof(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    expect_placed(st, &sys_amd_off, 0, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    expect_placed(st, &sys_no_managed, 0, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    expect_placed(st, &sys_no_managed, 0, TIDAL_HINT_HOST_READ, TIDAL_KIND_PINNED, 0, 0, "no managed memory");
    expect_placed(st, &sys_no_managed, TIDAL_DEVICE_DEFAULT, TIDAL_HINT_HOST_READ, TIDAL_KIND_PINNED,
                  TIDAL_DEVICE_HOST, 0, "no managed memory");
    static const tidal_policy_device fault_without_managed[] = {DEVICE(0, F_MIGRATES, TIDAL_XNACK_ON)};
    static const tidal_policy_system sys = {sizeof(tidal_policy_system), "sim", 1, fault_without_managed, 0u, NULL};
    expect_placed(st, &sys, 0, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    xnack.hooks.fini(st);
}

static void xnack_looks_at_the_requested_device(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    expect_placed(st, &sys_mixed, TIDAL_DEVICE_DEFAULT, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    expect_placed(st, &sys_mixed, 0, 0, TIDAL_KIND_DEVICE, 0, 0, "xnack-");
    expect_placed(st, &sys_mixed, 1, 0, TIDAL_KIND_MANAGED, 1, PREF_DEV, "xnack+");
    expect_placed(st, &sys_mixed, 1, TIDAL_HINT_HOST_READ, TIDAL_KIND_MANAGED, 1, PREF_HOST | ACC_BY, "xnack+");
    xnack.hooks.fini(st);
}

static void xnack_defers_explicit_kinds(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    const tidal_policy_system *all[] = {&sys_nvidia, &sys_amd_on, &sys_amd_off, &sys_sim_on, &sys_sim_off};
    for (size_t s = 0; s < COUNT(all); ++s)
        for (int k = TIDAL_KIND_DEVICE; k < TIDAL_KIND_COUNT; ++k)
            for (uint32_t hints = 0; hints <= TIDAL_HINT_ALL; ++hints) {
                tidal_placement out;
                assert_int_equal(place(&xnack, st, all[s], (tidal_kind)k, 0, hints, &out), TIDAL_POLICY_DEFER);
            }
    xnack.hooks.fini(st);
}

static void xnack_defers_bad_devices(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    tidal_placement out;
    assert_int_equal(place(&xnack, st, &sys_nvidia, TIDAL_KIND_AUTO, 1, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(place(&xnack, st, &sys_mixed, TIDAL_KIND_AUTO, 2, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(place(&xnack, st, &sys_nvidia, TIDAL_KIND_AUTO, TIDAL_DEVICE_HOST, TIDAL_HINT_HOST_READ, &out),
                     TIDAL_POLICY_DEFER);
    assert_int_equal(place(&xnack, st, &sys_nvidia, TIDAL_KIND_AUTO, -7, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(place(&xnack, st, &sys_empty, TIDAL_KIND_AUTO, TIDAL_DEVICE_DEFAULT, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(place(&xnack, st, NULL, TIDAL_KIND_AUTO, 0, 0, &out), TIDAL_POLICY_DEFER);
    xnack.hooks.fini(st);
}

/* Every AUTO request on every device kind with every option and hint combination: an answer the
 * core accepts, never pageable memory, and the table's split between the two device kinds. */
static void xnack_invariants(void **unused)
{
    (void)unused;
    const tidal_policy_system *all[] = {&sys_nvidia, &sys_amd_on, &sys_amd_off, &sys_sim_on, &sys_sim_off,
                                        &sys_no_managed};
    for (int accessed_by = 0; accessed_by < 2; ++accessed_by)
        for (int pinned = 0; pinned < 2; ++pinned) {
            const option opts[] = {OPT_BOOL("host_heavy_accessed_by", accessed_by), OPT_BOOL("pinned_streaming", pinned)};
            void *st = init_options(&xnack, opts, COUNT(opts));
            for (size_t s = 0; s < COUNT(all); ++s)
                for (uint32_t hints = 0; hints <= TIDAL_HINT_ALL; ++hints)
                    for (int32_t device = TIDAL_DEVICE_DEFAULT; device <= 0; ++device) {
                        tidal_placement out;
                        const uint32_t flags = all[s]->devices[0].flags;
                        const int migrates = (flags & F_MIGRATES) && (flags & F_MANAGED);
                        const int host_heavy = (hints & (TIDAL_HINT_HOST_READ | TIDAL_HINT_HOST_WRITE)) &&
                                               !(hints & TIDAL_HINT_DEVICE_ONLY);
                        assert_int_equal(place(&xnack, st, all[s], TIDAL_KIND_AUTO, device, hints, &out),
                                         TIDAL_POLICY_DECIDED);
                        assert_int_not_equal(out.kind, TIDAL_KIND_PAGEABLE);
                        assert_int_not_equal(out.kind, TIDAL_KIND_AUTO);
                        assert_true(out.reason[0] != '\0');
                        assert_true(memchr(out.reason, '\0', sizeof out.reason) != NULL);
                        assert_int_equal(out.advice & ~TIDAL_ADVICE_ALL, 0);
                        assert_int_equal(out.advice & TIDAL_ADVICE_COARSE_GRAIN, 0);
                        assert_false((out.advice & PREF_DEV) && (out.advice & PREF_HOST));
                        assert_int_equal(out.flags, TIDAL_PLACEMENT_CACHEABLE);
                        if (out.kind != TIDAL_KIND_MANAGED)
                            assert_int_equal(out.advice, 0);
                        else
                            assert_true(flags & F_MANAGED);
                        if (out.kind == TIDAL_KIND_PINNED)
                            assert_true(out.device == TIDAL_DEVICE_HOST || out.device == 0);
                        else
                            assert_int_equal(out.device, 0);
                        if (migrates)
                            assert_int_equal(out.kind, TIDAL_KIND_MANAGED);
                        else if (!host_heavy)
                            assert_int_equal(out.kind, TIDAL_KIND_DEVICE);
                        else
                            assert_int_not_equal(out.kind, TIDAL_KIND_DEVICE);
                    }
            xnack.hooks.fini(st);
        }
}

/* =====================================================================================
 * xnack: plan_prefetch
 * =================================================================================== */
static tidal_policy_verdict prefetch(void *state, const tidal_policy_system *sys, int32_t device, uint32_t mode,
                                     uint32_t hints, uint32_t advice, tidal_prefetch_plan *out)
{
    static char buffer[64];
    tidal_prefetch_request req;
    memset(&req, 0, sizeof req);
    req.struct_size = sizeof req;
    req.ptr = buffer;
    req.size = sizeof buffer;
    req.device = device;
    req.mode = mode;
    req.kind = TIDAL_KIND_MANAGED;
    req.alloc_device = 0;
    req.hints = hints;
    req.advice = advice;
    req.chunk_size = 2 * MiB;
    req.system = sys;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    return xnack.hooks.plan_prefetch(state, &req, out);
}

static void expect_plan(void *state, const tidal_policy_system *sys, int32_t device, uint32_t mode, uint32_t hints,
                        uint32_t advice, tidal_prefetch_action action, uint64_t chunk, uint32_t advice_set)
{
    tidal_prefetch_plan out;
    assert_int_equal(prefetch(state, sys, device, mode, hints, advice, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.action, action);
    assert_int_equal(out.chunk_size, chunk);
    assert_int_equal(out.advice_set, advice_set);
    assert_true(out.reason[0] != '\0');
}

#define R TIDAL_ACCESS_READ
#define W TIDAL_ACCESS_WRITE
#define RW TIDAL_ACCESS_READ_WRITE
#define MIGRATE TIDAL_PREFETCH_MIGRATE
#define SKIP TIDAL_PREFETCH_SKIP

static void xnack_prefetch_default(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    const tidal_policy_system *all[] = {&sys_nvidia, &sys_amd_on, &sys_amd_off, &sys_sim_on, &sys_sim_off};
    for (size_t s = 0; s < COUNT(all); ++s) {
        expect_plan(st, all[s], 0, R, 0, 0, MIGRATE, 0, 0);
        expect_plan(st, all[s], 0, RW, 0, PREF_DEV, MIGRATE, 0, 0);
        expect_plan(st, all[s], TIDAL_DEVICE_HOST, RW, 0, 0, MIGRATE, 0, 0);
    }
    xnack.hooks.fini(st);
}

static void xnack_prefetch_read_mostly(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    /* Read-only work on a read-mostly buffer: duplicates, which eviction drops without a copy. */
    expect_plan(st, &sys_nvidia, 0, R, TIDAL_HINT_READ_MOSTLY, PREF_DEV, MIGRATE, 0, RM);
    expect_plan(st, &sys_amd_off, 0, R, TIDAL_HINT_READ_MOSTLY, 0, MIGRATE, 0, RM);
    expect_plan(st, &sys_nvidia, TIDAL_DEVICE_HOST, R, TIDAL_HINT_READ_MOSTLY, 0, MIGRATE, 0, RM);
    /* Already carried: not asked again. */
    expect_plan(st, &sys_nvidia, 0, R, TIDAL_HINT_READ_MOSTLY, RM | PREF_DEV, MIGRATE, 0, 0);
    /* Written, or not hinted: no read-mostly advice. */
    expect_plan(st, &sys_nvidia, 0, RW, TIDAL_HINT_READ_MOSTLY, 0, MIGRATE, 0, 0);
    expect_plan(st, &sys_nvidia, 0, W, TIDAL_HINT_READ_MOSTLY, 0, MIGRATE, 0, 0);
    expect_plan(st, &sys_nvidia, 0, R, TIDAL_HINT_HOST_READ, 0, MIGRATE, 0, 0);
    xnack.hooks.fini(st);
}

static void xnack_prefetch_options(void **unused)
{
    (void)unused;
    const option opts[] = {OPT_BOOL("demand_paging", 1), OPT_STRING("chunk_size", "4MiB")};
    void *st = init_options(&xnack, opts, COUNT(opts));
    /* Pages migrate on fault: leave it to the device. */
    for (size_t s = 0; s < COUNT(systems_migrating); ++s) {
        expect_plan(st, systems_migrating[s], 0, RW, 0, 0, SKIP, 0, 0);
        expect_plan(st, systems_migrating[s], 0, R, TIDAL_HINT_READ_MOSTLY, 0, SKIP, 0, RM);
    }
    /* Without migration on fault nothing would move: prefetch anyway, in the option's chunks. */
    for (size_t s = 0; s < COUNT(systems_static); ++s)
        expect_plan(st, systems_static[s], 0, RW, 0, 0, MIGRATE, 4 * MiB, 0);
    /* To the host always moves. */
    expect_plan(st, &sys_nvidia, TIDAL_DEVICE_HOST, RW, 0, 0, MIGRATE, 4 * MiB, 0);
    /* The device of the request decides. */
    expect_plan(st, &sys_mixed, 0, RW, 0, 0, MIGRATE, 4 * MiB, 0);
    expect_plan(st, &sys_mixed, 1, RW, 0, 0, SKIP, 0, 0);
    xnack.hooks.fini(st);

    const option chunk[] = {OPT_INT("chunk_size", 65536)};
    st = init_options(&xnack, chunk, 1);
    expect_plan(st, &sys_nvidia, 0, RW, 0, 0, MIGRATE, 65536, 0);
    xnack.hooks.fini(st);
}

static void xnack_prefetch_bad_device(void **unused)
{
    (void)unused;
    void *st = init_default(&xnack);
    tidal_prefetch_plan out;
    assert_int_equal(prefetch(st, &sys_nvidia, 1, R, 0, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(prefetch(st, &sys_nvidia, TIDAL_DEVICE_DEFAULT, R, 0, 0, &out), TIDAL_POLICY_DEFER);
    assert_int_equal(prefetch(st, &sys_empty, 0, R, 0, 0, &out), TIDAL_POLICY_DEFER);
    xnack.hooks.fini(st);
}

/* =====================================================================================
 * lru
 * =================================================================================== */
static void lru_negotiates(void **unused)
{
    (void)unused;
    assert_string_equal(lru.hooks.name, "lru");
    assert_non_null(lru.hooks.description);
    assert_non_null(lru.hooks.init);
    assert_non_null(lru.hooks.fini);
    assert_non_null(lru.hooks.evict);
    assert_null(lru.hooks.place);
    assert_null(lru.hooks.recover);
    assert_null(lru.hooks.plan_prefetch);
    assert_int_equal(list_length(lru.hooks.option_keys), 3);
    assert_true(contains(lru.hooks.option_keys, "prefer_clean"));
    assert_true(contains(lru.hooks.option_keys, "clean_window"));
    assert_true(contains(lru.hooks.option_keys, "min_age"));
}

static void lru_bad_options(void **unused)
{
    (void)unused;
    const option clean_int[] = {OPT_INT("prefer_clean", 1)};
    expect_init_fails(&lru, clean_int, 1, "prefer_clean");
    const option age_negative[] = {OPT_INT("min_age", -1)};
    expect_init_fails(&lru, age_negative, 1, "min_age");
    const option age_string[] = {OPT_STRING("min_age", "5")};
    expect_init_fails(&lru, age_string, 1, "min_age");
    const option window_double[] = {OPT_DOUBLE("clean_window", 1.5)};
    expect_init_fails(&lru, window_double, 1, "clean_window");
    const option window_negative[] = {OPT_INT("clean_window", -3)};
    expect_init_fails(&lru, window_negative, 1, "clean_window");
    const option good[] = {OPT_BOOL("prefer_clean", 0), OPT_INT("clean_window", 10), OPT_INT("min_age", 2)};
    lru.hooks.fini(init_options(&lru, good, COUNT(good)));
}

typedef struct cand {
    size_t size;
    uint64_t last_use;
    uint32_t mode;
    uint32_t advice;
} cand;

/* Runs evict over `n` candidates; `order` gets exactly n entries (ASan sees any overrun). */
static tidal_policy_verdict evict(void *state, const cand *c, size_t n, uint64_t need, uint64_t now,
                                  size_t **order_out, tidal_evict_plan *out)
{
    tidal_resident_range *ranges = calloc(n ? n : 1, sizeof *ranges);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    assert_non_null(ranges);
    assert_non_null(order);
    static char memory[1];
    for (size_t i = 0; i < n; ++i) {
        ranges[i].struct_size = sizeof ranges[i];
        ranges[i].ptr = memory;
        ranges[i].size = c[i].size;
        ranges[i].last_use = c[i].last_use;
        ranges[i].uses = 1;
        ranges[i].mode = c[i].mode;
        ranges[i].advice = c[i].advice;
        ranges[i].tag = "";
    }
    tidal_evict_request req;
    memset(&req, 0, sizeof req);
    req.struct_size = sizeof req;
    req.device = 0;
    req.budget = 1 * GiB;
    req.resident = 1 * GiB;
    req.need = need;
    req.now = now;
    req.candidates = ranges;
    req.candidate_count = n;
    req.system = &sys_nvidia;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->order = order;
    out->count = (size_t)-1;
    tidal_policy_verdict v = lru.hooks.evict(state, &req, out);
    free(ranges);
    *order_out = order;
    return v;
}

/* The plan must be exactly `expected` (n_expected indices), each index once and in range. */
static void expect_order(void *state, const cand *c, size_t n, uint64_t need, uint64_t now, const size_t *expected,
                         size_t n_expected)
{
    size_t *order = NULL;
    tidal_evict_plan out;
    assert_int_equal(evict(state, c, n, need, now, &order, &out), TIDAL_POLICY_DECIDED);
    if (out.count != n_expected)
        print_error("evicted %zu ranges, expected %zu (%s)\n", out.count, n_expected, out.reason);
    assert_int_equal(out.count, n_expected);
    for (size_t i = 0; i < out.count; ++i) {
        assert_true(order[i] < n);
        for (size_t j = 0; j < i; ++j)
            assert_int_not_equal(order[i], order[j]);
        if (order[i] != expected[i])
            print_error("position %zu: got %zu, expected %zu (%s)\n", i, order[i], expected[i], out.reason);
        assert_int_equal(order[i], expected[i]);
    }
    assert_true(out.reason[0] != '\0');
    free(order);
}

#define DIRTY RW, 0u
#define CLEAN R, RM

static void lru_orders_least_recent_first(void **unused)
{
    (void)unused;
    void *st = init_default(&lru);
    const cand c[] = {
        {1 * MiB, 50, DIRTY}, /* 0 */
        {1 * MiB, 10, DIRTY}, /* 1 */
        {4 * MiB, 30, DIRTY}, /* 2 */
        {2 * MiB, 10, DIRTY}, /* 3: as old as 1, larger: first */
        {8 * MiB, 40, DIRTY}, /* 4 */
    };
    const size_t all[] = {3, 1, 2, 4, 0};
    /* Stops as soon as the need is met. */
    expect_order(st, c, COUNT(c), 1, 100, all, 1);
    expect_order(st, c, COUNT(c), 2 * MiB, 100, all, 1);
    expect_order(st, c, COUNT(c), 2 * MiB + 1, 100, all, 2);
    expect_order(st, c, COUNT(c), 7 * MiB, 100, all, 3);
    expect_order(st, c, COUNT(c), 15 * MiB, 100, all, 4);
    expect_order(st, c, COUNT(c), 16 * MiB, 100, all, 5);
    lru.hooks.fini(st);
}

static void lru_need_larger_than_all(void **unused)
{
    (void)unused;
    void *st = init_default(&lru);
    const cand c[] = {{1 * MiB, 5, DIRTY}, {1 * MiB, 3, DIRTY}, {1 * MiB, 4, CLEAN}};
    const size_t expected[] = {2, 1, 0};
    size_t *order = NULL;
    tidal_evict_plan out;
    expect_order(st, c, COUNT(c), 1 * GiB, 10, expected, 3);
    assert_int_equal(evict(st, c, COUNT(c), UINT64_MAX, 10, &order, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.count, 3);
    assert_non_null(strstr(out.reason, "needed"));
    free(order);
    lru.hooks.fini(st);
}

static void lru_zero_candidates_and_zero_need(void **unused)
{
    (void)unused;
    void *st = init_default(&lru);
    size_t *order = NULL;
    tidal_evict_plan out;
    assert_int_equal(evict(st, NULL, 0, 1 * MiB, 10, &order, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.count, 0);
    assert_true(out.reason[0] != '\0');
    free(order);
    const cand c[] = {{1 * MiB, 5, DIRTY}};
    assert_int_equal(evict(st, c, 1, 0, 10, &order, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.count, 0);
    free(order);
    lru.hooks.fini(st);
}

static void lru_prefers_clean(void **unused)
{
    (void)unused;
    const cand c[] = {
        {1 * MiB, 10, DIRTY},                   /* 0: oldest, dirty */
        {1 * MiB, 40, CLEAN},                   /* 1: clean */
        {1 * MiB, 20, R, 0u},                   /* 2: read only but no read-mostly advice: copied back */
        {1 * MiB, 30, RW, RM},                  /* 3: read-mostly but written since resident */
        {1 * MiB, 50, CLEAN},                   /* 4: clean, newest */
        {1 * MiB, 15, R, RM | PREF_DEV},        /* 5: clean */
    };
    void *st = init_default(&lru);
    const size_t clean_first[] = {5, 1, 4, 0, 2, 3};
    expect_order(st, c, COUNT(c), 6 * MiB, 100, clean_first, 6);
    expect_order(st, c, COUNT(c), 2 * MiB, 100, clean_first, 2);
    lru.hooks.fini(st);

    const option off[] = {OPT_BOOL("prefer_clean", 0)};
    st = init_options(&lru, off, 1);
    const size_t lru_only[] = {0, 5, 2, 3, 1, 4};
    expect_order(st, c, COUNT(c), 6 * MiB, 100, lru_only, 6);
    lru.hooks.fini(st);

    /* Only clean ranges unused for more than clean_window ticks jump the queue. */
    const option window[] = {OPT_INT("clean_window", 60)};
    st = init_options(&lru, window, 1);
    /* now 100: last_use < 40 qualifies, so 5 (15) does, 1 (40) and 4 (50) do not. */
    const size_t windowed[] = {5, 0, 2, 3, 1, 4};
    expect_order(st, c, COUNT(c), 6 * MiB, 100, windowed, 6);
    /* A clock younger than the window: no clean range qualifies. */
    expect_order(st, c, COUNT(c), 6 * MiB, 55, lru_only, 6);
    lru.hooks.fini(st);
}

static void lru_min_age_last_resort(void **unused)
{
    (void)unused;
    const cand c[] = {
        {4 * MiB, 98, DIRTY}, /* 0: young */
        {1 * MiB, 10, DIRTY}, /* 1 */
        {1 * MiB, 90, CLEAN}, /* 2: age 10, not young: clean goes first */
        {2 * MiB, 95, CLEAN}, /* 3: young, although clean */
        {1 * MiB, 60, DIRTY}, /* 4 */
        {1 * MiB, 120, DIRTY},/* 5: from the future: as young as can be */
    };
    const option age[] = {OPT_INT("min_age", 10)};
    void *st = init_options(&lru, age, 1);
    const size_t expected[] = {2, 1, 4, 3, 0, 5};
    expect_order(st, c, COUNT(c), 3 * MiB, 100, expected, 3);
    /* More than the old ones hold: the young follow, least recent first. */
    expect_order(st, c, COUNT(c), 4 * MiB, 100, expected, 4);
    expect_order(st, c, COUNT(c), 100 * MiB, 100, expected, 6);
    lru.hooks.fini(st);

    /* min_age 0: nothing is too young (5 sorts by its last_use). */
    st = init_default(&lru);
    const size_t plain[] = {2, 3, 1, 4, 0, 5};
    expect_order(st, c, COUNT(c), 100 * MiB, 100, plain, 6);
    lru.hooks.fini(st);
}

/* A newer core's candidates are larger than this header's: the stride is their struct_size. */
static void lru_reads_candidates_at_their_size(void **unused)
{
    (void)unused;
    typedef struct wider {
        tidal_resident_range r;
        uint64_t appended[3];
    } wider;
    wider w[3];
    memset(w, 0, sizeof w);
    const uint64_t last[] = {30, 10, 20};
    for (size_t i = 0; i < 3; ++i) {
        w[i].r.struct_size = sizeof w[i];
        w[i].r.size = 1 * MiB;
        w[i].r.last_use = last[i];
        w[i].r.mode = RW;
        w[i].r.tag = "";
        w[i].appended[0] = w[i].appended[1] = w[i].appended[2] = UINT64_MAX;
    }
    size_t order[3] = {9, 9, 9};
    tidal_evict_request req;
    memset(&req, 0, sizeof req);
    req.struct_size = sizeof req;
    req.need = 3 * MiB;
    req.now = 100;
    req.candidates = &w[0].r;
    req.candidate_count = 3;
    req.system = &sys_nvidia;
    tidal_evict_plan out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    out.order = order;
    void *st = init_default(&lru);
    assert_int_equal(lru.hooks.evict(st, &req, &out), TIDAL_POLICY_DECIDED);
    assert_int_equal(out.count, 3);
    assert_int_equal(order[0], 1);
    assert_int_equal(order[1], 2);
    assert_int_equal(order[2], 0);

    /* Candidates too small to hold what the policy reads: refused, with a reason. */
    for (size_t i = 0; i < 3; ++i)
        w[i].r.struct_size = offsetof(tidal_resident_range, mode);
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    out.order = order;
    assert_int_equal(lru.hooks.evict(st, &req, &out), TIDAL_POLICY_REFUSE);
    assert_true(out.reason[0] != '\0');
    lru.hooks.fini(st);
}

/* Random candidates: every plan is a prefix of a permutation, stops at the need, and is
 * least-recent-first within the plain tier. */
static void lru_random_plans_are_sound(void **unused)
{
    (void)unused;
    const option opts[] = {OPT_INT("min_age", 5), OPT_INT("clean_window", 3)};
    void *st = init_options(&lru, opts, COUNT(opts));
    unsigned seed = 12345u;
    for (int round = 0; round < 500; ++round) {
        cand c[40];
        const size_t n = (size_t)(rand_r(&seed) % 40);
        uint64_t total = 0;
        for (size_t i = 0; i < n; ++i) {
            c[i].size = (size_t)(1 + rand_r(&seed) % 64) * 4096;
            c[i].last_use = (uint64_t)(rand_r(&seed) % 50);
            c[i].mode = (uint32_t)(1 + rand_r(&seed) % 3);
            c[i].advice = (rand_r(&seed) & 1) ? RM : 0;
            total += c[i].size;
        }
        const uint64_t need = (uint64_t)(rand_r(&seed) % (total + 8192 + 1));
        size_t *order = NULL;
        tidal_evict_plan out;
        assert_int_equal(evict(st, c, n, need, 50, &order, &out), TIDAL_POLICY_DECIDED);
        assert_true(out.count <= n);
        int seen[40] = {0};
        uint64_t freed = 0;
        for (size_t i = 0; i < out.count; ++i) {
            assert_true(order[i] < n);
            assert_false(seen[order[i]]);
            seen[order[i]] = 1;
            /* Each pick was still needed when it was made. */
            assert_true(freed < need);
            freed += c[order[i]].size;
        }
        if (need <= total)
            assert_true(freed >= need);
        else
            assert_int_equal(out.count, n);
        free(order);
    }
    lru.hooks.fini(st);
}

/* =====================================================================================
 * main
 * =================================================================================== */
int main(int argc, char **argv)
{
    policy_dir = argc > 1 ? argv[1] : getenv("TIDAL_TEST_POLICY_DIR");
    if (!policy_dir || !*policy_dir) {
        fprintf(stderr, "usage: %s POLICY_DIR (or set TIDAL_TEST_POLICY_DIR): the folder holding "
                        "xnack/tidal-policy-xnack.so and lru/tidal-policy-lru.so (a build tree's policies/)\n",
                argv[0]);
        return 2;
    }
    if (!load("xnack", &xnack) || !load("lru", &lru))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(xnack_negotiates),
        cmocka_unit_test(negotiate_refuses_abi_0),
        cmocka_unit_test(negotiate_with_old_core),
        cmocka_unit_test(negotiate_with_newer_core),
        cmocka_unit_test(xnack_bad_options),
        cmocka_unit_test(xnack_good_options),
        cmocka_unit_test(xnack_on_gpu_buffers_managed),
        cmocka_unit_test(xnack_on_host_heavy),
        cmocka_unit_test(xnack_off_device_memory),
        cmocka_unit_test(xnack_off_pinned_streaming),
        cmocka_unit_test(xnack_off_elastic_under_budget),
        cmocka_unit_test(xnack_flags_that_are_no_proof),
        cmocka_unit_test(xnack_looks_at_the_requested_device),
        cmocka_unit_test(xnack_defers_explicit_kinds),
        cmocka_unit_test(xnack_defers_bad_devices),
        cmocka_unit_test(xnack_invariants),
        cmocka_unit_test(xnack_prefetch_default),
        cmocka_unit_test(xnack_prefetch_read_mostly),
        cmocka_unit_test(xnack_prefetch_options),
        cmocka_unit_test(xnack_prefetch_bad_device),
        cmocka_unit_test(lru_negotiates),
        cmocka_unit_test(lru_bad_options),
        cmocka_unit_test(lru_orders_least_recent_first),
        cmocka_unit_test(lru_need_larger_than_all),
        cmocka_unit_test(lru_zero_candidates_and_zero_need),
        cmocka_unit_test(lru_prefers_clean),
        cmocka_unit_test(lru_min_age_last_resort),
        cmocka_unit_test(lru_reads_candidates_at_their_size),
        cmocka_unit_test(lru_random_plans_are_sound),
    };
    int failed = cmocka_run_group_tests_name("builtin-policies", tests, NULL, NULL);
    /* Unloaded after the tests so ASan's leak report still names the plugins' frames. */
    dlclose(xnack.handle);
    dlclose(lru.handle);
    return failed;
}
