module kneebench/go

go 1.22
