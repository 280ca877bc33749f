#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */

#include "harness.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static int starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

void harness_isolate_environment(void)
{
    /* Collect first: unsetenv() rewrites environ while we walk it. */
    char *names[256];
    size_t count = 0;
    for (char **entry = environ; entry != NULL && *entry != NULL && count < 256; ++entry) {
        const char *text = *entry;
        if (!starts_with(text, "TIDAL_") || starts_with(text, "TIDAL_TEST_") ||
            starts_with(text, "TIDAL_LOG_LEVEL="))
            continue;
        const char *equals = strchr(text, '=');
        size_t length = equals != NULL ? (size_t)(equals - text) : strlen(text);
        names[count] = malloc(length + 1);
        if (names[count] == NULL)
            abort();
        memcpy(names[count], text, length);
        names[count][length] = '\0';
        ++count;
    }
    for (size_t i = 0; i < count; ++i) {
        unsetenv(names[i]);
        free(names[i]);
    }
}

const char *harness_required_env(const char *name)
{
    const char *value = getenv(name);
    if (value == NULL || value[0] == '\0') {
        print_error("environment variable %s is not set: run this test through `meson test`\n",
                    name);
        fail();
    }
    return value;
}

static char *vformat(const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (length < 0)
        abort();
    char *text = malloc((size_t)length + 1);
    if (text == NULL)
        abort();
    vsnprintf(text, (size_t)length + 1, format, args);
    return text;
}

char *harness_format(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = vformat(format, args);
    va_end(args);
    return text;
}

char *harness_toml_string(const char *path)
{
    size_t length = strlen(path);
    char *text = malloc(2 * length + 3);
    if (text == NULL)
        abort();
    char *out = text;
    *out++ = '"';
    for (const char *in = path; *in != '\0'; ++in) {
        if (*in == '"' || *in == '\\')
            *out++ = '\\';
        *out++ = *in;
    }
    *out++ = '"';
    *out = '\0';
    return text;
}

static void report_create_failure(tidal_status status, const char *toml)
{
    char *message = harness_format("%s", tidal_last_error());
    print_error("tidal_context_create_from_string failed with %s: %s\nconfiguration:\n%s\n",
                tidal_status_name(status), message, toml);
    free(message);
    fail();
}

tidal_context *harness_context(const char *toml)
{
    tidal_context *ctx = NULL;
    tidal_status status = tidal_context_create_from_string(toml, &ctx);
    if (status != TIDAL_OK || ctx == NULL)
        report_create_failure(status, toml);
    return ctx;
}

tidal_context *harness_context_format(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *toml = vformat(format, args);
    va_end(args);
    tidal_context *ctx = harness_context(toml); /* leaks `toml` when it fails: the test is over */
    free(toml);
    return ctx;
}

char *harness_context_fails(const char *toml, tidal_status expected)
{
    /* Not NULL, so a failure that forgets to reset *out is caught. */
    tidal_context *ctx = (tidal_context *)(uintptr_t)0x10;
    tidal_status status = tidal_context_create_from_string(toml, &ctx);
    char *message = harness_format("%s", tidal_last_error());
    if (status != expected) {
        if (status == TIDAL_OK)
            tidal_context_destroy(ctx);
        print_error("creating a context from\n%s\nreturned %s, expected %s; message: \"%s\"\n", toml,
                    tidal_status_name(status), tidal_status_name(expected), message);
        free(message);
        fail();
    }
    assert_null(ctx);
    return message;
}

char *harness_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    char *dir = harness_format("%s/tidal-capi-XXXXXX", base);
    if (mkdtemp(dir) == NULL) {
        print_error("mkdtemp(%s): %s\n", dir, strerror(errno));
        free(dir);
        fail();
    }
    return dir;
}

char *harness_write_file(const char *dir, const char *name, const char *contents)
{
    char *path = harness_format("%s/%s", dir, name);
    FILE *file = fopen(path, "w");
    if (file == NULL) {
        print_error("cannot write %s: %s\n", path, strerror(errno));
        fail();
    }
    size_t length = strlen(contents);
    if (fwrite(contents, 1, length, file) != length || fclose(file) != 0) {
        print_error("cannot write %s: %s\n", path, strerror(errno));
        fail();
    }
    return path;
}

void harness_remove_dir(const char *dir)
{
    DIR *handle = opendir(dir);
    if (handle != NULL) {
        struct dirent *entry;
        while ((entry = readdir(handle)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            char *path = harness_format("%s/%s", dir, entry->d_name);
            unlink(path);
            free(path);
        }
        closedir(handle);
    }
    rmdir(dir);
}

int harness_contains(const char *text, const char *needle, int ignore_case)
{
    if (text == NULL || needle == NULL)
        return 0;
    size_t needle_length = strlen(needle);
    for (const char *at = text; *at != '\0'; ++at) {
        size_t i = 0;
        while (i < needle_length && at[i] != '\0' &&
               (ignore_case ? tolower((unsigned char)at[i]) == tolower((unsigned char)needle[i])
                            : at[i] == needle[i]))
            ++i;
        if (i == needle_length)
            return 1;
    }
    return needle_length == 0;
}

int harness_contains_number(const char *text, long number)
{
    if (text == NULL)
        return 0;
    char digits[32];
    snprintf(digits, sizeof digits, "%ld", number);
    size_t length = strlen(digits);
    for (const char *at = strstr(text, digits); at != NULL; at = strstr(at + 1, digits)) {
        int digit_before = at > text && isdigit((unsigned char)at[-1]);
        int digit_after = isdigit((unsigned char)at[length]);
        if (!digit_before && !digit_after)
            return 1;
    }
    return 0;
}

void *harness_alloc(tidal_context *ctx, tidal_kind kind, size_t size, uint32_t hints)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = kind;
    desc.hints = hints;
    void *ptr = NULL;
    assert_ok(tidal_alloc(ctx, size, &desc, &ptr));
    assert_non_null(ptr);
    return ptr;
}

tidal_status harness_check(tidal_context *ctx, tidal_check_kind kind, void *target, const void *source,
                           size_t size, uint64_t seed, void *stream, uint64_t *result)
{
    tidal_check check = TIDAL_CHECK_INIT;
    check.kind = kind;
    check.target = target;
    check.source = source;
    check.size = size;
    check.seed = seed;
    check.stream = stream;
    tidal_status status = tidal_check_run(ctx, &check);
    if (result != NULL)
        *result = check.result;
    return status;
}

tidal_status harness_declare(tidal_context *ctx, void *stream, void *p, size_t size, uint32_t mode, uint32_t flags)
{
    tidal_access a = TIDAL_ACCESS_INIT;
    a.ptr = p;
    a.size = size;
    a.device = 0;
    a.mode = mode;
    return tidal_declare(ctx, stream, &a, 1, flags);
}

int32_t harness_prefetch_location(tidal_context *ctx, void *ptr, size_t size)
{
    tidal_range_info info = TIDAL_RANGE_INFO_INIT;
    assert_ok(tidal_range_query(ctx, ptr, size, &info));
    return info.last_prefetch_location;
}

static unsigned char pattern_byte(size_t index, unsigned seed)
{
    /* Varies with the position so a shifted or overlapping buffer is noticed too. */
    return (unsigned char)((index * 131u + seed * 7u + (index >> 8)) & 0xffu);
}

void harness_fill(void *ptr, size_t size, unsigned seed)
{
    unsigned char *bytes = ptr;
    for (size_t i = 0; i < size; ++i)
        bytes[i] = pattern_byte(i, seed);
}

int harness_holds(const void *ptr, size_t size, unsigned seed)
{
    const unsigned char *bytes = ptr;
    for (size_t i = 0; i < size; ++i)
        if (bytes[i] != pattern_byte(i, seed))
            return 0;
    return 1;
}

static size_t fenced_span(size_t size, size_t *page)
{
    *page = (size_t)sysconf(_SC_PAGESIZE);
    return (size + *page - 1) / *page * *page + *page;
}

void *harness_alloc_fenced(size_t size)
{
    size_t page = 0;
    const size_t span = fenced_span(size, &page);
    char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(base != MAP_FAILED);
    assert_int_equal(mprotect(base + span - page, page, PROT_NONE), 0);
    return base + span - page - size;
}

void harness_free_fenced(void *ptr, size_t size)
{
    size_t page = 0;
    const size_t span = fenced_span(size, &page);
    char *base = (char *)ptr + size + page - span;
    assert_int_equal(munmap(base, span), 0);
}

int harness_setup_sim(void **state)
{
    tidal_context *ctx = NULL;
    tidal_status status = tidal_context_create_from_string(HARNESS_SIM_CONFIG, &ctx);
    if (status != TIDAL_OK) {
        char *message = harness_format("%s", tidal_last_error());
        print_error("cannot create the simulated context: %s: %s\n", tidal_status_name(status),
                    message);
        free(message);
        return -1;
    }
    *state = ctx;
    return 0;
}

int harness_teardown_context(void **state)
{
    tidal_status status = tidal_context_destroy((tidal_context *)*state);
    *state = NULL;
    if (status != TIDAL_OK) {
        char *message = harness_format("%s", tidal_last_error());
        print_error("tidal_context_destroy failed: %s: %s\n", tidal_status_name(status), message);
        free(message);
        return -1;
    }
    return 0;
}

void harness_fail_status(const char *file, int line, const char *call, tidal_status got,
                         tidal_status expected, const char *last_error)
{
    /* Copied first: the text is only valid until the next tidal call on this thread. */
    char *message = harness_format("%s", last_error != NULL ? last_error : "(NULL)");
    print_error("%s\n  returned %s (%d), expected %s (%d)\n  tidal_last_error(): \"%s\"\n", call,
                tidal_status_name(got), (int)got, tidal_status_name(expected), (int)expected,
                message);
    free(message);
    _fail(file, line);
}

void harness_fail_contains(const char *file, int line, const char *what, const char *text,
                           const char *needle)
{
    print_error("%s does not contain \"%s\"\n  it is: \"%s\"\n", what, needle,
                text != NULL ? text : "(NULL)");
    _fail(file, line);
}

unsigned harness_next_random(unsigned *state)
{
    unsigned x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}
