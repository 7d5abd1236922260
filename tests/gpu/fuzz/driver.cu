// GPU fuzzer (tests/gpu/fuzz/run.py): random exact operators, every instance through the main GPU
// test's runners (tests/gpu/driver.cuh) at the sizes run.py drew around its shape's thresholds;
// the reference folds the spec's own identity, combine and lift on the host, in input order, and
// every result must match it bit for bit.  cases.inc (written by run.py) holds the operators'
// host copies, their input draws and run_all.
//   ./fuzz_test [--quick] [--only NAME]   --only also gives every scan exact-size buffers
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "fz.h"

#pragma nv_diag_suppress 186 // driver.cuh's `s < m` with m a template's constant 0 (by key)
#include "../driver.cuh"
#include "../family_driver.h"

#include "cases.inc"

int main(int argc, char **argv)
{
    const Args a = parse_args(argc, argv);
    g_exact = a.only != nullptr; // the sanitizer's runs: exact-size buffers
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    Stats st;
    run_all(a, st);
    std::printf("%d passed, %d failed\n", st.passed, st.failed);
    return st.failed ? 1 : 0;
}
