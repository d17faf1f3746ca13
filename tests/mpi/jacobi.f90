! jacobi_f: an unmodified Fortran MPI program (`use mpi`) for the libapprate-mpi tests.
! 1-D heat equation split in blocks: every iteration a halo exchange with MPI_SENDRECV to
! both neighbours and an MPI_ALLREDUCE of the residual; MPI_PCONTROL(1) once per iteration.
!   jacobi_f [ITERATIONS]      prints "jacobi_f: rank=R iterations=I"
program jacobi_f
  use mpi
  implicit none
  integer, parameter :: n = 4096
  integer :: rank, nprocs, ierr, it, iters, left, right, i
  integer :: status(MPI_STATUS_SIZE)
  double precision :: u(0:n+1), v(0:n+1), res, total
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  iters = 150
  if (command_argument_count() >= 1) then
     call get_command_argument(1, arg)
     read (arg, *) iters
  end if
  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= nprocs) right = MPI_PROC_NULL
  u = 0d0
  if (rank == 0) u(0) = 100d0
  do it = 1, iters
     call MPI_SENDRECV(u(n), 1, MPI_DOUBLE_PRECISION, right, 0, u(0), 1, MPI_DOUBLE_PRECISION, &
          left, 0, MPI_COMM_WORLD, status, ierr)
     call MPI_SENDRECV(u(1), 1, MPI_DOUBLE_PRECISION, left, 1, u(n+1), 1, MPI_DOUBLE_PRECISION, &
          right, 1, MPI_COMM_WORLD, status, ierr)
     res = 0d0
     do i = 1, n
        v(i) = 0.5d0 * (u(i-1) + u(i+1))
        res = res + (v(i) - u(i))**2
     end do
     u(1:n) = v(1:n)
     call MPI_ALLREDUCE(res, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
     call MPI_PCONTROL(1)
  end do
  write (*, '(a,i0,a,i0)') 'jacobi_f: rank=', rank, ' iterations=', iters
  call MPI_FINALIZE(ierr)
end program jacobi_f
