module tftrain

go 1.22
