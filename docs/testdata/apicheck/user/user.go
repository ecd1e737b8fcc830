// Package user uses lib.
package user

import (
	"fmt"

	"example.com/apicheck/lib"
)

// Use names what lib's users name.
func Use(w lib.Walker) {
	r, err := lib.Do(lib.ModeA)
	fmt.Println(r.N, err, lib.Name("x"), lib.OffA, lib.NewDog())
	w.Walk()
}
