package codec

import "math"

// IncrementSequence returns s advanced by n with Kafka's wrap-around: sequences
// go from MaxInt32 to 0, never negative (DefaultRecordBatch.incrementSequence).
func IncrementSequence(s, n int32) int32 {
	if s > math.MaxInt32-n {
		return n - (math.MaxInt32 - s) - 1
	}
	return s + n
}

// DecrementSequence is the inverse of IncrementSequence
// (DefaultRecordBatch.decrementSequence).
func DecrementSequence(s, n int32) int32 {
	if s < n {
		return math.MaxInt32 - (n - s) + 1
	}
	return s - n
}
