package codec

import (
	"github.com/mirrorpath/mirrorpath/internal/compress/lz4"
	"github.com/mirrorpath/mirrorpath/internal/compress/snappy"
)

// The framing pieces the tests build and check streams with, as the codecs'
// packages export them.
var (
	xxh32       = lz4.XXH32
	xerialMagic = snappy.Magic
)
