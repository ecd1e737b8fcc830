// Command app uses user: a main package's uses count.
package main

import (
	"example.com/apicheck/lib"
	"example.com/apicheck/user"
)

func main() { user.Use(lib.Dog{}) }
