package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "", "the module proxy directory to write (created if missing)")
	version := flag.String("version", "", "the version to publish every module at, e.g. v0.1.0")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: publishmodules -out DIR -version vX.Y.Z MODULE_DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := publish(*out, *version, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "publishmodules: %v\n", err)
		os.Exit(1)
	}
}
