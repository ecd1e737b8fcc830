module example.com/apicheck

go 1.26
