// What the GPU test drivers of the families share (tests/gpu/{transpose,matmul,nccl}/driver.cu):
// a reproducible random stream, and the command line (--quick: small cases; --only NAME: one
// instance, as the sanitizer runs ask).
#pragma once
#include <cstdint>
#include <cstring>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

// xorshift64: the next 32 random bits
static inline uint32_t next_u32()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

struct Args {
    bool quick = false;
    const char *only = nullptr;
};

static inline Args parse_args(int argc, char **argv)
{
    Args a;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick"))
            a.quick = true;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            a.only = argv[++i];
    }
    return a;
}
