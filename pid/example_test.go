package pid_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/mirrorpath/mirrorpath/pid"
)

// The seed's worked example: PID 5 from clusters whose regions are 42 and 99.
func ExampleMapBitfield() {
	for _, region := range []uint32{42, 99} {
		m, _ := pid.MapBitfield(region, 5, pid.Reject)
		r, low, _ := pid.Unbitfield(m)
		fmt.Printf("%d region=%d low=%d\n", m, r, low)
	}
	_, err := pid.MapBitfield(42, 1<<31+5, pid.Reject)
	fmt.Println(err)
	// Output:
	// -9223371946660462587 region=42 low=5
	// -9223371824253894651 region=99 low=5
	// pid: producer ID does not fit the bit-field layout (>= 2^31): UNMAPPABLE_PRODUCER_ID (1004)
}

func ExampleMapNegate() {
	fmt.Println(pid.MapNegate(5), pid.MapNegate(pid.MapNegate(5)), pid.MapNegate(-1))
	fmt.Println(pid.MapNegateSkip(5), pid.MapNegateSkip(-7))
	// Output:
	// -7 5 -1
	// -7 -7
}

// Two clusters whose IDs share a region meet in one partition: the second
// one's PID 5 gets a salt, recorded in the mirror-state log; a new leader
// that loads the log maps it the same way.
func ExampleMapper() {
	a, _ := pid.ParseClusterID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	b := a
	b[0] ^= 0xff // (hi^d, lo^d): the same XOR region
	b[8] ^= 0xff

	var log bytes.Buffer
	m := pid.NewMapper(pid.Config{
		Strategy: pid.Bitfield,
		Rand:     rand.NewPCG(1, 2),
		Registry: pid.NewRegistry(&log, func() int64 { return 0 }),
	})
	a5, _ := m.Map(a, 5)
	b5, _ := m.Map(b, 5)
	fmt.Println(a5 != b5, m.Stats().Salted)

	reg := pid.NewRegistry(nil, nil)
	if err := reg.Load(log.Bytes()); err != nil {
		fmt.Println(err)
	}
	leader2 := pid.NewMapper(pid.Config{Strategy: pid.Bitfield, Registry: reg})
	again, _ := leader2.Map(b, 5)
	fmt.Println(again == b5, reg.Len())
	// Output:
	// true 1
	// true 1
}
