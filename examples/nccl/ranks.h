/* One process a GPU: this process's rank, the number of ranks and its device, from the command
 * line or the environment, and the ncclUniqueId handed from rank 0 to the others by a file (or by
 * MPI_Bcast where built with -DAG_WITH_MPI).  Shared by examples/nccl/main.c, the GPU test
 * (tests/gpu/nccl/driver.cu) and the benchmark (bench/nccl/bench.cu); C99 and C++.
 *
 * Where each value comes from, first found first:
 *   rank     --rank R,    AG_RANK,    OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK
 *   ranks    --ranks N,   AG_RANKS,   OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS, WORLD_SIZE
 *   device   --device D,  AG_DEVICE,  OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, LOCAL_RANK,
 *                         else the rank modulo the visible GPUs
 *   id file  --id-file F, AG_NCCL_ID_FILE (a path every rank sees; a fresh one a job)
 *   transport --transport default|net, AG_NCCL_TRANSPORT
 * An id file, --rank or AG_RANK choose one process a rank (mpirun's, Slurm's or torchrun's
 * variables alone do not); without them (and without MPI) the program runs its threaded form.
 * C files include <unistd.h>'s POSIX functions: define _POSIX_C_SOURCE 200809L before any
 * include. */
#ifndef EXAMPLES_NCCL_RANKS_H
#define EXAMPLES_NCCL_RANKS_H
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#ifdef AG_WITH_MPI
#define OMPI_SKIP_MPICXX  1 /* MPI's C functions only */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

struct rank_env {
    int rank, ranks, device; /* device -1: the rank modulo the visible GPUs */
    const char *id_file, *transport;
    int processes; /* 1: one process a rank (this one is `rank`); 0: the threaded form */
};

static inline const char *rank_getenv(const char *const *names)
{
    for (; *names; ++names) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return NULL;
}

static inline int rank_int(const char *v, int fallback)
{
    return v ? atoi(v) : fallback;
}

/* takes --rank, --ranks, --device, --id-file and --transport (each followed by its value) out of
   argv, leaving the program's own arguments in order */
static inline void rank_take_args(int *argc, char **argv, const char **vals)
{
    static const char *const keys[] = { "--rank", "--ranks", "--device", "--id-file", "--transport" };
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        int k = 0;
        while (k < 5 && strcmp(argv[i], keys[k]) != 0)
            ++k;
        if (k < 5 && i + 1 < *argc)
            vals[k] = argv[++i];
        else
            argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
}

/* NVLink multicast off (NCCL_NVLS_ENABLE=0) always; "net": NCCL's peer-to-peer and shared-memory
   transports off and its socket network forced, as between hosts.  Before any NCCL call. */
static inline int rank_transport(const char *transport)
{
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    if (!transport || !strcmp(transport, "default"))
        return 0;
    if (strcmp(transport, "net") != 0) {
        fprintf(stderr, "--transport: 'default' or 'net', not '%s'\n", transport);
        return -1;
    }
    setenv("NCCL_P2P_DISABLE", "1", 1);
    setenv("NCCL_SHM_DISABLE", "1", 1);
    setenv("NCCL_NET", "Socket", 1);
    setenv("NCCL_IB_DISABLE", "1", 1);
    return 0;
}

/* Reads this process's place (see the top of the file) and applies the transport; under MPI
   also MPI_Init.  Returns 0, or -1 after a line on stderr. */
static inline int rank_begin(struct rank_env *e, int *argc, char ***argv)
{
    static const char *const rk[] = { "AG_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK", NULL };
    static const char *const sz[] = {
        "AG_RANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE", NULL
    };
    static const char *const dv[] = { "AG_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK", NULL };
    static const char *const id[] = { "AG_NCCL_ID_FILE", NULL };
    static const char *const tr[] = { "AG_NCCL_TRANSPORT", NULL };
    const char *v[5] = { NULL, NULL, NULL, NULL, NULL };
    rank_take_args(argc, *argv, v);
    e->rank = rank_int(v[0] ? v[0] : rank_getenv(rk), -1);
    e->ranks = rank_int(v[1] ? v[1] : rank_getenv(sz), -1);
    e->device = rank_int(v[2] ? v[2] : rank_getenv(dv), -1);
    e->id_file = v[3] ? v[3] : rank_getenv(id);
    e->transport = v[4] ? v[4] : rank_getenv(tr);
#ifdef AG_WITH_MPI
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &e->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e->ranks);
    if (e->device < 0) { /* the rank among the processes of this host */
        MPI_Comm host;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, e->rank, MPI_INFO_NULL, &host);
        MPI_Comm_rank(host, &e->device);
        MPI_Comm_free(&host);
    }
    e->processes = 1;
#else
    /* one process a rank where told so (an id file, or our own rank variable or argument), not
       because a launcher's variable happens to be in the environment */
    const char *own = getenv("AG_RANK");
    e->processes = e->id_file || v[0] || (own && *own);
    if (e->processes && (e->rank < 0 || e->ranks < 1 || e->rank >= e->ranks || !e->id_file)) {
        fprintf(stderr,
                "one process a rank needs a rank in [0, ranks), ranks and an id file (rank %d, ranks %d, "
                "id file %s)\n",
                e->rank, e->ranks, e->id_file ? e->id_file : "none");
        return -1;
    }
#endif
    return rank_transport(e->transport);
}

static inline void rank_end(void)
{
#ifdef AG_WITH_MPI
    MPI_Finalize();
#endif
}

/* rank 0: a new id, written to `path` whole or not at all (a file of its own, then linked to the
   name, which must not exist yet: a stale id from an earlier job is refused) */
static inline int rank_id_write(const char *path, const ncclUniqueId *id)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600), ok = fd >= 0;
    ok = ok && write(fd, id, sizeof *id) == (ssize_t)sizeof *id && fsync(fd) == 0;
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    if (ok && link(tmp, path) != 0) {
        fprintf(stderr, "%s: %s (a stale id file from an earlier job? give each job a new path)\n", path,
                strerror(errno));
        ok = 0;
    } else if (!ok)
        fprintf(stderr, "%s: cannot write the NCCL id: %s\n", tmp, strerror(errno));
    unlink(tmp);
    return ok ? 0 : -1;
}

/* the other ranks: wait for the file (10 ms a look, AG_NCCL_ID_TIMEOUT seconds at most, 300 by
   default), then read the id */
static inline int rank_id_read(const char *path, ncclUniqueId *id)
{
    const long looks = 100L * rank_int(getenv("AG_NCCL_ID_TIMEOUT"), 300);
    const struct timespec pause = { 0, 10 * 1000 * 1000 };
    for (long k = 0; k <= looks; ++k) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            ssize_t got = read(fd, id, sizeof *id);
            close(fd);
            if (got == (ssize_t)sizeof *id)
                return 0;
        }
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "%s: no NCCL id after %ld s\n", path, looks / 100);
    return -1;
}

/* the communicator of this process's rank on its device (set here; e->device fixed where it
   was -1) */
static inline int rank_comm(struct rank_env *e, ncclComm_t *comm)
{
    int gpus = 0;
    if (e->device < 0 && cudaGetDeviceCount(&gpus) == cudaSuccess && gpus > 0)
        e->device = e->rank % gpus;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (e->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
        fprintf(stderr, "ncclGetUniqueId failed\n");
        return -1;
    }
#ifdef AG_WITH_MPI
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    if (e->rank == 0 ? rank_id_write(e->id_file, &id) : rank_id_read(e->id_file, &id))
        return -1;
#endif
    if (cudaSetDevice(e->device) != cudaSuccess) {
        fprintf(stderr, "rank %d: no device %d\n", e->rank, e->device);
        return -1;
    }
    ncclResult_t r = ncclCommInitRank(comm, e->ranks, id, e->rank);
    if (r != ncclSuccess) {
        fprintf(stderr, "rank %d: ncclCommInitRank: %s\n", e->rank, ncclGetErrorString(r));
        return -1;
    }
    return 0;
}

#endif
