// Package proccpu reads the CPU time the whole process has used, which
// benchmarks report beside wall time: on a shared machine the process's own
// CPU is the steadier of the two.
package proccpu
