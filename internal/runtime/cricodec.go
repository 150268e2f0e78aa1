package runtime

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// criBufferPool has a tier for every power of two from 256 B to 1 MiB.
// gRPC's default pool jumps from 32 KiB to 1 MiB, so every list reply of a
// node with a hundred pods (about 100 KiB) took a 1 MiB buffer, and the
// relist and housekeeping kept two of them live: 4 MiB of an idle agent's
// memory.
var criBufferPool = func() mem.BufferPool {
	p, err := mem.NewBinaryTieredBufferPool(8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	if err != nil {
		panic(err)
	}
	return p
}()

// criCodec is gRPC's proto codec, except that it decodes replies through
// criBufferPool; gRPC's own codec ignores the connection's pool.
type criCodec struct{}

func (criCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

// Unmarshal decodes data into v. proto.Unmarshal copies what it keeps, so
// the buffer goes back to the pool at once.
func (criCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("cri codec: %T is not a proto.Message", v)
	}
	buf := data.MaterializeToBuffer(criBufferPool)
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

func (criCodec) Name() string { return "proto" }
