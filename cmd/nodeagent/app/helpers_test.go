package app

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func uid(s string) types.UID { return types.UID(s) }
