package conform

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Kfake is franz-go's in-process broker (pkg/kfake) on 127.0.0.1 with two
// nodes, so that a partition's leadership can move while its log and
// producer state stay.
type Kfake struct {
	Cluster *kfake.Cluster
	Addr    string
}

// StartKfake starts the in-process cluster on loopback ports.
func StartKfake() (*Kfake, error) {
	c, err := kfake.NewCluster(
		kfake.NumBrokers(2),
		kfake.ListenFn(loopback),
	)
	if err != nil {
		return nil, fmt.Errorf("conform: starting kfake: %w", err)
	}
	addrs := c.ListenAddrs()
	return &Kfake{Cluster: c, Addr: addrs[0]}, nil
}

// Close stops the cluster.
func (k *Kfake) Close() { k.Cluster.Close() }

// Dial connects a Target to the cluster, with Restart moving a partition's
// leadership to the other node.
func (k *Kfake) Dial(ctx context.Context, timeout time.Duration) (*Target, error) {
	t, err := Dial(ctx, k.Addr, timeout)
	if err != nil {
		return nil, err
	}
	t.Restart = func(topic string, partition int32) error {
		leader := k.Cluster.LeaderFor(topic, partition)
		if leader < 0 {
			return fmt.Errorf("no leader for %s/%d", topic, partition)
		}
		if err := k.Cluster.MoveTopicPartition(topic, partition, 1-leader); err != nil {
			return err
		}
		if now := k.Cluster.LeaderFor(topic, partition); now != 1-leader {
			return fmt.Errorf("leader of %s/%d is %d after the move to %d", topic, partition, now, 1-leader)
		}
		return nil
	}
	return t, nil
}

// KfakeModule is the module path of the in-process broker.
const KfakeModule = "github.com/twmb/franz-go/pkg/kfake"

// KfakeVersion is the version of kfake built into the running binary, or ""
// when the build information does not say.
func KfakeVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == KfakeModule {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}
