/* A stand-in for a rank of the NCCL programs, for tests/cpu/test_nccl_launch.py (no GPU, no
 * NCCL library): examples/nccl/ranks.h's place and id handover, with a made-up id, then what the
 * first argument asks.  Prints `rank R of N device D id HEX transport T nvls V p2p V net V args A..`.
 *   ok | fail:R (rank R exits 3) | sleep:S (every rank) | late:S (rank 0 writes the id S s late)
 *   | stubborn:S (ignores SIGTERM, sleeps S s) */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>

#include "../../examples/nccl/ranks.h"

static void nap(double s)
{
    struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&t, NULL);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "-";
}

int main(int argc, char **argv)
{
    struct rank_env e;
    if (rank_begin(&e, &argc, &argv))
        return 2;
    const char *what = argc > 1 ? argv[1] : "ok";
    double arg = argc > 1 && strchr(what, ':') ? atof(strchr(what, ':') + 1) : 0;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (e.processes && e.rank == 0) {
        if (!strncmp(what, "late:", 5))
            nap(arg);
        snprintf(id.internal, sizeof id.internal, "id-of-%ld", (long)getpid());
    }
    if (e.processes && (e.rank == 0 ? rank_id_write(e.id_file, &id) : rank_id_read(e.id_file, &id)))
        return 1;
    printf("rank %d of %d device %d id %s transport %s nvls %s p2p %s net %s %s args", e.rank, e.ranks, e.device,
           id.internal, e.transport ? e.transport : "-", env("NCCL_NVLS_ENABLE"), env("NCCL_P2P_DISABLE"),
           env("NCCL_NET"), e.processes ? "procs" : "threads");
    for (int i = 1; i < argc; ++i)
        printf(" %s", argv[i]);
    printf("\n");
    fflush(stdout);
    if (!strncmp(what, "fail:", 5) && e.rank == (int)arg)
        return 3;
    if (!strncmp(what, "fail:", 5) || !strncmp(what, "sleep:", 6))
        nap(!strncmp(what, "sleep:", 6) ? arg : 60);
    if (!strncmp(what, "stubborn:", 9)) {
        signal(SIGTERM, SIG_IGN);
        nap(arg);
    }
    return 0;
}
