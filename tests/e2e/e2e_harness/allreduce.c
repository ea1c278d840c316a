/* mpigen e2e: every rank reports where it runs and the result of two MPI_Allreduce calls.
 *
 * Prints one line per rank:
 *   rank=R size=N local_rank=L host=HOSTNAME sum=S max=M
 * where S must be N*(N+1)/2 (each rank contributes rank+1) and M must be N-1.
 * Exits with the code given by --fail-rank R[:CODE] on rank R (after the collectives), so a test can
 * check that one failing rank fails the whole launcher.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, fail_rank = -1, fail_code = 3;
    long mine, sum = 0, max = 0;
    char host[256] = "";
    /* Open MPI names the local rank OMPI_COMM_WORLD_LOCAL_RANK; Hydra (MPICH, Intel MPI) MPI_LOCALRANKID. */
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!local) local = getenv("MPI_LOCALRANKID");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--fail-rank") == 0) {
            char *colon = strchr(argv[i + 1], ':');
            fail_rank = atoi(argv[i + 1]);
            if (colon) fail_code = atoi(colon + 1);
        }
    }
    gethostname(host, sizeof host - 1);
    mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    mine = rank;
    MPI_Allreduce(&mine, &max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    printf("rank=%d size=%d local_rank=%s host=%s sum=%ld max=%ld\n", rank, size, local ? local : "?", host,
           sum, max);
    fflush(stdout);
    if (rank == fail_rank) {
        exit(fail_code); /* without MPI_Finalize, as a crashing rank would */
    }
    MPI_Finalize();
    return 0;
}
