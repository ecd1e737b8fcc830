package pid

// prefetch hints the CPU to load the cache line at addr (PREFETCHT0). It
// never faults, even on an invalid address, and retires at once, so a miss
// it starts overlaps with the work that follows.
//
//go:noescape
func prefetch(addr uintptr)
