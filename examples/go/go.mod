module tftrain-example

go 1.22

require tftrain v0.0.0

replace tftrain => ../../bindings/go
