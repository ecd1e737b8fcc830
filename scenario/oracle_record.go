// What the oracle records of every batch when it is written: each append,
// whoever makes it (a client's send, a coordinator's marker, a mirror or
// replica fetch, STOPPING's own output, the cleaner's rewrite), goes through
// a recorder, so that a batch retention or a truncation deletes before any
// scan reads it is still known.

package scenario

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
)

// sendTruth is what a client's send was: its instance (the client that sent
// it: a new instance of a transactional.id is another), PID, base sequence,
// epoch and record count as the client wrote them, whatever a mirror
// rewrites.
type sendTruth struct {
	instance string
	pid      int64
	seq      int32
	epoch    int16
	records  int32
}

// writeID is what tells one write apart by truth, not by bytes: a mirror
// may rewrite the PID (and the cleaner empties a batch), never the producer
// header, the timestamp the send or the marker carries, or the send.
type writeID struct {
	producer  string // the true producer ("" for control and emptied batches)
	txnSerial int
	control   codec.ControlType // for control batches
	ts        int64             // the base timestamp of a data batch, a marker's timestamp
	send      sendTruth         // a client data batch's send (zero for others)
}

// identify reads b's writeID.
func (o *oracle) identify(b codec.Batch) writeID {
	t := readTruth(b)
	id := writeID{producer: t.producer, txnSerial: t.txnSerial, control: t.control, ts: t.ts}
	if !b.IsControl() {
		id.ts = b.BaseTimestamp()
		id.send = o.sends[id.ts]
	}
	return id
}

// sent registers the send of one client batch (its timestamp is unique).
func (o *oracle) sent(d dataBatch, instance string) {
	o.sends[d.ts] = sendTruth{instance: instance, pid: d.pid, seq: d.seq, epoch: d.epoch, records: int32(d.records)}
}

// written is what the oracle knows was written to one partition, by base
// offset: every batch of the leader's log, and what retention deleted of it.
// Entries a truncation removed are dropped (prune).
type written map[int64]writeID

// writtenOf returns p's record.
func (o *oracle) writtenOf(p *partition) written {
	m := o.written[p]
	if m == nil {
		m = written{}
		o.written[p] = m
	}
	return m
}

// record notes every batch of r's log from offset from on as written to p.
// A follower copies its leader's batches at the leader's offsets, so one
// record per partition holds both.
func (o *oracle) record(p *partition, r replica, from int64) {
	m := o.writtenOf(p)
	for _, b := range batchesFrom(r, max(0, from)) {
		id := o.identify(b)
		m[b.BaseOffset()] = id
		if !b.IsControl() && b.IsTransactional() && id.send.instance != "" {
			k := txnKey{p, id.send.instance, id.txnSerial}
			if !containsWrite(o.txnData[k], b.BaseOffset()) {
				o.txnData[k] = append(o.txnData[k], placedWrite{b.BaseOffset(), id})
			}
		}
	}
}

// txnKey names one transaction's data on one partition: the client
// instance that sent it and its transaction serial (a new instance of a
// transactional.id counts its transactions afresh).
type txnKey struct {
	p         *partition
	instance  string
	txnSerial int
}

// placedWrite is one write at its offset.
type placedWrite struct {
	offset int64
	id     writeID
}

func containsWrite(ws []placedWrite, off int64) bool {
	for _, w := range ws {
		if w.offset == off {
			return true
		}
	}
	return false
}

// holds reports whether r's log holds, at offset, a batch that is the write
// id (by truth).
func (o *oracle) holds(r replica, offset int64, id writeID) bool {
	b, ok := batchAt(r, offset)
	return ok && b.BaseOffset() == offset && o.identify(b) == id
}

// prune drops from p's record what the leader's log no longer holds at its
// place (a truncation removed it, another write took the offset); below the
// log start, what retention deleted stays recorded.
func (o *oracle) prune(p *partition) {
	m := o.writtenOf(p)
	lead := p.lead()
	for off, id := range m {
		if off >= lead.LogStartOffset() && !o.holds(lead, off, id) {
			delete(m, off)
		}
	}
}

// recorder is a replica whose every write the oracle records (record).
type recorder struct {
	replica
	p *partition
	o *oracle
}

func (r *recorder) AppendClient(batch []byte) (appendResult, error) {
	from := r.replica.LogEndOffset()
	res, err := r.replica.AppendClient(batch)
	r.o.record(r.p, r.replica, from)
	return res, err
}

func (r *recorder) AppendCoordinator(batch []byte, tv psm.TxnVersion) (appendResult, error) {
	from := r.replica.LogEndOffset()
	res, err := r.replica.AppendCoordinator(batch, tv)
	r.o.record(r.p, r.replica, from)
	return res, err
}

func (r *recorder) AppendMirrored(batches []byte, source [16]byte, fanIn bool) (appendResult, error) {
	from := r.replica.LogEndOffset()
	res, err := r.replica.AppendMirrored(batches, source, fanIn)
	r.o.record(r.p, r.replica, from)
	return res, err
}

func (r *recorder) AppendReplica(batches []byte) (appendResult, error) {
	from := r.replica.LogEndOffset()
	res, err := r.replica.AppendReplica(batches)
	r.o.record(r.p, r.replica, from)
	return res, err
}

// Stop may cut the log back to its LSO (the truncate variant) before it
// writes its markers and barrier.
func (r *recorder) Stop(req stopRequest) error {
	from := min(r.replica.LastStableOffset(), r.replica.LogEndOffset())
	err := r.replica.Stop(req)
	r.o.record(r.p, r.replica, from)
	return err
}

// unrecorded lists every batch a replica's log holds (from its log start)
// that the oracle's record of its partition does not hold at its offset,
// as "cluster partition replica offset": a write made without the oracle
// seeing it. The simulator's invariant is that there is none.
func (o *oracle) unrecorded() []string {
	var out []string
	for _, cl := range o.w.clusters {
		for _, p := range cl.parts {
			m := o.written[p]
			for i, r := range p.reps {
				for _, b := range batchesFrom(r, r.LogStartOffset()) {
					if id, ok := m[b.BaseOffset()]; !ok || id != o.identify(b) {
						out = append(out, fmt.Sprintf("%s %s replica %d offset %d", cl.name, p.key, i, b.BaseOffset()))
					}
				}
			}
		}
	}
	return out
}
