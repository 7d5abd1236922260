// GPU test of the generated transposes: every instance of tests/gpu/transpose/spec.toml against a
// CPU transpose, byte for byte, over odd shapes, pitches, batches, misaligned pointers, empty
// inputs and one past 2^31 elements; bad arguments must give cudaErrorInvalidValue.  The cases
// table (cases.inc) is written by run.py: a call wrapper and the element size per instance, and
// for a transpose through an operator's lift the input's size and alignment and the lift on the
// CPU (the spec's own C), which the reference applies to each element.
//   ./transpose_test [--quick] [--only NAME]      prints a line a failure, then `N passed, M failed`
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../family_driver.h"
#include "tt.h"

typedef cudaError_t (*TransposeFn)(const void *in, size_t in_pitch, size_t in_stride, size_t rows, size_t cols,
                                   size_t batch, void *out, size_t out_pitch, size_t out_stride, cudaStream_t stream);

typedef void (*LiftFn)(const unsigned char *x, size_t i, unsigned char *y);

struct Instance {
    const char *name;
    size_t size; // the output's element (and the input's, without a lift)
    size_t tile;
    TransposeFn fn;
    size_t in_size, in_align; // the input's element, with a lift
    LiftFn lift;              // NULL: elements are moved
};

#include "cases.inc"

static int passed = 0, failed = 0;

static void fail(const Instance &inst, const char *what, const std::string &detail)
{
    ++failed;
    printf("FAIL %s %s: %s\n", inst.name, what, detail.c_str());
}

static unsigned char next_byte()
{
    return (unsigned char)next_u32();
}

struct Case {
    size_t rows, cols, batch, in_pad, out_pad, in_gap, out_gap, in_offset, out_offset;
};

// one case: exact-size buffers (the sanitizer sees any byte past them), input random bytes,
// output a sentinel, then every output byte checked: the transposed elements where they belong
// and the sentinel everywhere else
static void run_case(const Instance &inst, const Case &c)
{
    const size_t E = inst.size, IE = inst.lift ? inst.in_size : E;
    const size_t in_pitch = c.cols + c.in_pad, out_pitch = c.rows + c.out_pad;
    const size_t in_stride = c.rows * in_pitch + c.in_gap, out_stride = c.cols * out_pitch + c.out_gap;
    const size_t in_elems = c.batch ? (c.batch - 1) * in_stride + (c.rows ? (c.rows - 1) * in_pitch + c.cols : 0) : 0;
    const size_t out_elems =
        c.batch ? (c.batch - 1) * out_stride + (c.cols ? (c.cols - 1) * out_pitch + c.rows : 0) : 0;
    const size_t in_bytes = in_elems * IE + c.in_offset, out_bytes = out_elems * E + c.out_offset;
    char what[160];
    snprintf(what, sizeof what, "%zux%zu batch %zu pitches +%zu/+%zu gaps %zu/%zu offsets %zu/%zu", c.rows, c.cols,
             c.batch, c.in_pad, c.out_pad, c.in_gap, c.out_gap, c.in_offset, c.out_offset);
    std::vector<unsigned char> h_in(in_bytes), h_out(out_bytes, 0xA5), got(out_bytes);
    for (auto &b : h_in)
        b = next_byte();
    unsigned char *d_in = nullptr, *d_out = nullptr;
    if (cudaMalloc(&d_in, in_bytes ? in_bytes : 1) != cudaSuccess ||
        cudaMalloc(&d_out, out_bytes ? out_bytes : 1) != cudaSuccess) {
        fail(inst, what, "cudaMalloc");
        cudaFree(d_in);
        return;
    }
    cudaMemcpy(d_in, h_in.data(), in_bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_out, h_out.data(), out_bytes, cudaMemcpyHostToDevice);
    cudaError_t err = inst.fn(d_in + c.in_offset, in_pitch, in_stride, c.rows, c.cols, c.batch, d_out + c.out_offset,
                              out_pitch, out_stride, 0);
    cudaError_t sync = cudaDeviceSynchronize();
    const bool misaligned = inst.lift && c.in_offset % inst.in_align && c.rows && c.cols && c.batch;
    if (misaligned) {
        // a lift reads the input as its type: a pointer misaligned for it is refused, nothing written
        cudaMemcpy(got.data(), d_out, out_bytes, cudaMemcpyDeviceToHost);
        if (err != cudaErrorMisalignedAddress || sync != cudaSuccess)
            fail(inst, what, std::string("want cudaErrorMisalignedAddress, got ") + cudaGetErrorString(err));
        else if (got != h_out)
            fail(inst, what, "refused, but the output was written");
        else
            ++passed;
    } else if (err != cudaSuccess || sync != cudaSuccess) {
        fail(inst, what, std::string("error ") + cudaGetErrorString(err != cudaSuccess ? err : sync));
    } else {
        cudaMemcpy(got.data(), d_out, out_bytes, cudaMemcpyDeviceToHost);
        for (size_t b = 0; b < c.batch; ++b)
            for (size_t r = 0; r < c.rows; ++r)
                for (size_t col = 0; col < c.cols; ++col) {
                    const size_t i = b * in_stride + r * in_pitch + col;
                    unsigned char *to = &h_out[c.out_offset + (b * out_stride + col * out_pitch + r) * E];
                    if (inst.lift)
                        inst.lift(&h_in[c.in_offset + i * IE], i, to);
                    else
                        memcpy(to, &h_in[c.in_offset + i * E], E);
                }
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < out_bytes; ++i)
            if (got[i] != h_out[i] && bad++ == 0)
                first = i;
        if (bad) {
            char d[96];
            snprintf(d, sizeof d, "%zu bytes differ, the first at byte %zu (got %02x, want %02x)", bad, first,
                     got[first], h_out[first]);
            fail(inst, what, d);
        } else {
            ++passed;
        }
    }
    cudaFree(d_in);
    cudaFree(d_out);
}

// arguments the function must refuse with cudaErrorInvalidValue, launching nothing
static void run_refusals(const Instance &inst)
{
    unsigned char *d = nullptr;
    const size_t E = inst.lift && inst.in_size > inst.size ? inst.in_size : inst.size;
    cudaMalloc(&d, 64 * 64 * E * 3);
    struct {
        const char *what;
        const void *in;
        size_t in_pitch, in_stride, rows, cols, batch;
        void *out;
        size_t out_pitch, out_stride;
    } bad[] = {
        { "NULL input", nullptr, 8, 64, 8, 8, 1, d, 8, 64 },
        { "NULL output", d, 8, 64, 8, 8, 1, nullptr, 8, 64 },
        { "in_pitch < cols", d, 7, 64, 8, 8, 1, d + 64 * 64 * E, 8, 64 },
        { "out_pitch < rows", d, 8, 64, 8, 8, 1, d + 64 * 64 * E, 7, 64 },
        { "in place", d, 8, 64, 8, 8, 1, d, 8, 64 },
        { "overlapping", d, 8, 64, 8, 8, 1, d + 3 * E, 8, 64 },
        { "batch stride < a matrix", d, 8, 63, 8, 8, 2, d + 64 * 64 * E, 8, 64 },
        { "sizes past the address space", d, 1, 1, (size_t)1 << 62, 4, 1, d + 64 * 64 * E, (size_t)1 << 62, 1 },
    };
    for (auto &b : bad) {
        cudaError_t err =
            inst.fn(b.in, b.in_pitch, b.in_stride, b.rows, b.cols, b.batch, b.out, b.out_pitch, b.out_stride, 0);
        if (err != cudaErrorInvalidValue)
            fail(inst, b.what, std::string("want cudaErrorInvalidValue, got ") + cudaGetErrorString(err));
        else
            ++passed;
    }
    cudaGetLastError();
    cudaFree(d);
}

int main(int argc, char **argv)
{
    const Args args = parse_args(argc, argv);
    const bool quick = args.quick;
    const char *only = args.only;
    for (const Instance &inst : instances) {
        if (only && strcmp(only, inst.name))
            continue;
        const size_t T = inst.tile;
        std::vector<Case> cases = {
            { 0, 5, 1, 0, 0, 0, 0, 0, 0 },
            { 5, 0, 1, 0, 0, 0, 0, 0, 0 },
            { 3, 3, 0, 0, 0, 0, 0, 0, 0 },
            { 1, 1, 1, 0, 0, 0, 0, 0, 0 },
            { 1, 1000, 1, 0, 0, 0, 0, 0, 0 },
            { 1000, 1, 1, 0, 0, 0, 0, 0, 0 },
            { T, T, 1, 0, 0, 0, 0, 0, 0 },
            { 31, 33, 1, 0, 0, 0, 0, 0, 0 },
            { 2 * T + 1, 3 * T - 1, 1, 0, 0, 0, 0, 0, 0 },
            { 97, 101, 3, 3, 5, 7, 11, 0, 0 },
            { 2 * T, 2 * T, 4, 1, 1, 0, 0, 0, 0 },
            { 2 * T, 2 * T, 2, 0, 0, 0, 0, 1, 3 },
            { 2 * T, 2 * T, 2, 0, 0, 0, 0, 2, 2 },
            { 3 * T, 2 * T, 5, 0, 0, 1, 1, 0, 0 },
            { 64, 64, 300, 0, 0, 0, 0, 0, 0 },
            // out rows off 32-byte sectors (written in shifted windows): a last tile row a few rows
            // past a tile, full tiles with a batch gap and a 4-byte offset, 4-byte offsets of wider
            // elements; then out rows on sectors with the input's off them
            { 3 * T + 3, 2 * T, 1, 0, 0, 0, 0, 0, 0 },
            { 2 * T + 9, T, 1, 0, 0, 0, 0, 0, 0 },
            { 4 * T + 5, 2 * T, 2, 0, 1, 0, 3, 0, 4 },
            { 2 * T + 3, 2 * T + 1, 1, 0, 0, 0, 0, 4, 4 },
            { 2 * T, 2 * T + 1, 1, 1, 32, 0, 0, 0, 0 },
            // pitches, strides and offsets all multiples of 4 elements or bytes (3-byte elements'
            // full tiles go as words), edges partial
            { 2 * T + 4, 3 * T + 8, 3, 4, 8, 4, 8, 4, 8 },
        };
        if (!quick) {
            cases.push_back({ 1021, 2053, 1, 0, 0, 0, 0, 0, 0 });
            cases.push_back({ 4 * T, 4 * T, 1000, 0, 0, 0, 0, 0, 0 });
            if (inst.size <= 4)
                cases.push_back({ 4099, 8191, 1, 2, 1, 0, 0, 0, 0 });
            // one past 2^31 elements (of a 1-byte type: 2 GiB each side)
            if (inst.size == 1)
                cases.push_back({ (1 << 16) + 3, (1 << 15) + 5, 1, 0, 0, 0, 0, 0, 0 });
        }
        for (const Case &c : cases)
            run_case(inst, c);
        run_refusals(inst);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
