// Package fuzz holds the module's end-to-end fuzz targets: each takes its
// input through several packages the way a mirroring broker does and holds
// the outcome to references that share no code with that path. The targets
// of one package's rules stay beside the package (codec's FuzzDecompress,
// appendpath's FuzzAppendMirrored, conform's FuzzKfakeMatchesModel, …);
// these cross packages:
//
//   - FuzzMirrorPipeline: bytes → codec's framing and CRC → pid's mapping →
//     psm's producer state → storage's segment files → the segments read
//     back as `mirrorpath dump` reads them, every stored batch agreeing with
//     its input byte for byte outside the fields mirroring rewrites, with
//     hash/crc32's CRC-32C and with franz-go's kmsg decoding of its records;
//     the producer state rebuilt from the log alone equals the live one.
//   - FuzzMirrorOverWire: records produced by franz-go's client to its kfake
//     broker, fetched over the wire, mirrored into a partition and read back
//     with codec: the records, offsets and timestamps are those produced, and
//     the producer state holds the producer's last sequence.
//
// The package has no code outside its tests. `go test -fuzz`, `mirrorpath
// fuzz`, the fuzz smoke of .ci/run and the ClusterFuzzLite build find its
// targets as they find every other, with `go test -list '^Fuzz' ./...`.
package fuzz
