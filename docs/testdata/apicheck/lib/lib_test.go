package lib_test

import (
	"testing"

	"example.com/apicheck/lib"
)

func TestOwn(t *testing.T) { lib.OffenderOnlyOwnTests() }
