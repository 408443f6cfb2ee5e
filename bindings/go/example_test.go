package tftrain_test

import (
	"fmt"
	"log"

	"tftrain"
)

// The README's example (compiled by go test, not run: it trains).
func Example() {
	cfg, err := tftrain.LoadConfig("examples/configs/tiny.yaml")
	if err != nil {
		log.Fatal(err) // *tftrain.Error: Status and the library's Message
	}
	defer cfg.Close()
	cfg.Set("output.directory", "/tmp/tiny-go")
	checkpoint, _ := tftrain.CheckpointUniform(2)
	defer checkpoint.Close()
	cfg.SetCheckpoint(checkpoint)
	trainer, err := tftrain.NewTrainer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer trainer.Close()
	trainer.SetProgress(func(p tftrain.Progress) (cancel bool) {
		fmt.Printf("epoch %d step %d loss %.4f\n", p.Epoch, p.Step, p.TrainLoss)
		return false
	})
	report, err := trainer.Train()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("final_validation_loss: %.9g\n", report.FinalValidationLoss)
}
