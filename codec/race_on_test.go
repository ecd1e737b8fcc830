//go:build race

package codec

// raceEnabled: under the race detector sync.Pool drops what it is given at
// random, so pooled decoders are rebuilt and allocate.
const raceEnabled = true
