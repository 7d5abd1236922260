/* comms.h: the communicators of the NCCL test (driver.cu) and benchmark (bench/nccl/bench.cu).
 * Every visible GPU a rank of this process (a thread each, ncclCommInitAll), or, where the
 * launcher or MPI started one process a rank (rank_env.processes), this process's rank alone:
 * its slot of `comms` and `devs` filled, the others' left NULL and -1.  `local` lists the ranks
 * this process drives.  Include after examples/nccl/ranks.h. */
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

struct ag_comms {
    int R = 0, me = -1;   // the ranks; this process's rank (-1: it drives every rank)
    std::vector<ncclComm_t> comms;
    std::vector<int> devs, local;
};

// false where a communicator could not be made
static bool ag_make_comms(rank_env &e, ag_comms &c)
{
    if (e.processes) {
        c.R = e.ranks;
        c.me = e.rank;
        c.comms.assign(c.R, nullptr);
        c.devs.assign(c.R, -1);
        if (rank_comm(&e, &c.comms[c.me]))
            return false;
        c.devs[c.me] = e.device;
        c.local = { c.me };
        return true;
    }
    cudaGetDeviceCount(&c.R);
    c.comms.resize(c.R);
    for (int r = 0; r < c.R; ++r) {
        c.devs.push_back(r);
        c.local.push_back(r);
    }
    return ncclCommInitAll(c.comms.data(), c.R, nullptr) == ncclSuccess;
}
