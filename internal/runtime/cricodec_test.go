package runtime

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The codec decodes what gRPC's own encodes, small and large (a list reply
// of a busy node, well above 32 KiB), and refuses what is not a message.
func TestCRICodecRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 500} {
		in := &runtimeapi.ListContainersResponse{}
		for i := 0; i < n; i++ {
			in.Containers = append(in.Containers, &runtimeapi.Container{
				Id:          fmt.Sprintf("%064d", i),
				Labels:      map[string]string{"io.kubernetes.pod.name": fmt.Sprintf("pod-%d", i)},
				Annotations: map[string]string{"io.kubernetes.container.hash": fmt.Sprint(i)},
			})
		}
		data, err := criCodec{}.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		out := &runtimeapi.ListContainersResponse{}
		err = criCodec{}.Unmarshal(data, out)
		data.Free()
		if err != nil {
			t.Fatalf("%d containers: %v", n, err)
		}
		if !proto.Equal(in, out) {
			t.Errorf("%d containers: decoded a different message", n)
		}
	}
	if err := (criCodec{}).Unmarshal(nil, "not a message"); err == nil {
		t.Error("decoding into a string: no error")
	}
}
