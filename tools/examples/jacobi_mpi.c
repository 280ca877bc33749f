/* jacobi_mpi — jacobi_mpi.f90 in C: Jacobi sweeps for Laplace's equation on the unit square,
 * the grid's rows split across MPI ranks, halo rows exchanged every sweep straight from
 * tidal-allocated memory, and the rows the next sweep touches declared to tidal first.
 *
 * u = 1 on the top edge (row n + 1), 0 on the other three; n x n interior points; a fixed
 * number of sweeps, so the grid a run writes is the same bit for bit with 1 rank or with 4.
 *
 *   mpirun -np 4 jacobi-mpi-c [OUTPUT [SWEEPS]]
 *
 * OUTPUT (default jacobi-mpi-c.out): rank 0 writes the n x n interior there, raw doubles, row
 * by row. With TIDAL_DEVICE_SELECTION=local-rank each rank takes the device of its node-local
 * rank; with TIDAL_STATS=stats-%r.json each writes its own statistics. The sweeps run on the
 * host; on a GPU the bands would go to kernels and be declared on the rank's device instead. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tidal/tidal.h>

enum { N = 64 };

static int rank;

static void check(tidal_status status, const char *what)
{
    if (status != TIDAL_OK) {
        fprintf(stderr, "jacobi-mpi-c: rank %d: %s failed: %s: %s\n", rank, what, tidal_status_name(status),
                tidal_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double *allocate_band(tidal_context *ctx, int rows, const char *tag)
{
    tidal_alloc_desc desc = TIDAL_ALLOC_DESC_INIT;
    desc.kind = TIDAL_KIND_MANAGED;
    desc.tag = tag;
    void *p = NULL;
    check(tidal_alloc(ctx, sizeof(double) * (N + 2) * (size_t)(rows + 2), &desc, &p), "tidal_alloc");
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *output = argc > 1 ? argv[1] : "jacobi-mpi-c.out";
    const int sweeps = argc > 2 ? atoi(argv[2]) : 400;

    tidal_context *ctx = NULL;
    check(tidal_context_create(&ctx), "tidal_context_create");
    tidal_system_info sys = TIDAL_SYSTEM_INFO_INIT;
    check(tidal_system_info_get(ctx, &sys), "tidal_system_info_get");

    /* Rows 1..N as evenly as they go; this rank's band has a halo row on each side. */
    int *counts = malloc(sizeof(int) * (size_t)ranks), *displs = malloc(sizeof(int) * (size_t)ranks);
    for (int r = 0, at = 0; r < ranks; ++r) {
        counts[r] = (N / ranks + (r < N % ranks)) * N;
        displs[r] = at;
        at += counts[r];
    }
    const int rows = counts[rank] / N, first = displs[rank] / N + 1;
    const int below = rank > 0 ? rank - 1 : MPI_PROC_NULL, above = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;
    double *u = allocate_band(ctx, rows, "jacobi/u"), *u_new = allocate_band(ctx, rows, "jacobi/u_new");
    printf("jacobi-mpi-c: rank %d of %d: rows %d..%d on device %d (tidal_system_info.default_device)\n", rank, ranks,
           first, first + rows - 1, sys.default_device < 0 ? 0 : sys.default_device);
#define AT(a, j, i) ((a)[(size_t)(j) * (N + 2) + (size_t)(i)])

    memset(u, 0, sizeof(double) * (N + 2) * (size_t)(rows + 2));
    if (rank == ranks - 1)
        for (int i = 0; i < N + 2; ++i)
            AT(u, rows + 1, i) = 1.0;
    memcpy(u_new, u, sizeof(double) * (N + 2) * (size_t)(rows + 2));

    for (int sweep = 0; sweep < sweeps; ++sweep) {
        /* What this sweep reads (band and halos) and writes (the band), where it runs. */
        tidal_access use[2] = {TIDAL_ACCESS_INIT, TIDAL_ACCESS_INIT};
        use[0].ptr = u;
        use[0].size = sizeof(double) * (N + 2) * (size_t)(rows + 2);
        use[0].device = TIDAL_DEVICE_HOST;
        use[0].mode = TIDAL_ACCESS_READ;
        use[1].ptr = &AT(u_new, 1, 0);
        use[1].size = sizeof(double) * (N + 2) * (size_t)rows;
        use[1].device = TIDAL_DEVICE_HOST;
        use[1].mode = TIDAL_ACCESS_WRITE;
        check(tidal_declare(ctx, NULL, use, 2, 0), "tidal_declare");
        MPI_Sendrecv(&AT(u, rows, 0), N + 2, MPI_DOUBLE, above, 1, &AT(u, 0, 0), N + 2, MPI_DOUBLE, below, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&AT(u, 1, 0), N + 2, MPI_DOUBLE, below, 2, &AT(u, rows + 1, 0), N + 2, MPI_DOUBLE, above, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == ranks - 1) /* the top edge is a boundary, never received */
            for (int i = 0; i < N + 2; ++i)
                AT(u, rows + 1, i) = 1.0;
        for (int j = 1; j <= rows; ++j)
            for (int i = 1; i <= N; ++i)
                AT(u_new, j, i) = 0.25 * (AT(u, j, i - 1) + AT(u, j, i + 1) + AT(u, j - 1, i) + AT(u, j + 1, i));
        double *swap = u;
        u = u_new;
        u_new = swap;
    }

    double *band = malloc(sizeof(double) * N * (size_t)rows), *grid = NULL;
    for (int j = 0; j < rows; ++j)
        memcpy(band + (size_t)j * N, &AT(u, j + 1, 1), sizeof(double) * N);
    if (rank == 0)
        grid = malloc(sizeof(double) * N * N);
    MPI_Gatherv(band, N * rows, MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(output, "wb");
        if (!f || fwrite(grid, sizeof(double), N * N, f) != N * N || fclose(f) != 0) {
            fprintf(stderr, "jacobi-mpi-c: cannot write %s\n", output);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("jacobi-mpi-c: %d sweeps on %d rank(s): u(n/2, n/2) = %.10f, grid written to %s\n", sweeps, ranks,
               grid[(size_t)(N / 2 - 1) * N + (N / 2 - 1)], output);
    }
    free(grid);
    free(band);
    free(counts);
    free(displs);
    check(tidal_free(ctx, u), "tidal_free");
    check(tidal_free(ctx, u_new), "tidal_free");
    tidal_context_destroy(ctx);
    MPI_Finalize();
    return 0;
}
