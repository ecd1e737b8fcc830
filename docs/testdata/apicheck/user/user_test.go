package user

import (
	"testing"

	"example.com/apicheck/lib"
)

func TestOther(t *testing.T) { lib.OnlyOtherTests() }
