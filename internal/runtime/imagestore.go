package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Image is an image the runtime holds, as image garbage collection sees
// it.
type Image struct {
	// ID is the runtime's image ID (for containerd, the config digest).
	ID   string
	Tags []string
	// Size is what the runtime reports for the image, in bytes.
	Size uint64
	// Pinned: the runtime asks that the image never be removed (containerd
	// pins its sandbox image).
	Pinned bool
}

// ImageFs is the filesystem the runtime keeps its images on.
type ImageFs struct {
	// Mountpoint is where the runtime says the filesystem is: its capacity
	// comes from statfs there.
	Mountpoint string
	// UsedBytes is what the runtime's images take of it.
	UsedBytes uint64
}

// ListImages lists every image the runtime holds.
func (r *Runtime) ListImages(ctx context.Context) ([]Image, error) {
	imgs, err := r.img.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	out := make([]Image, 0, len(imgs))
	for _, i := range imgs {
		if i.GetId() == "" {
			continue
		}
		out = append(out, Image{ID: i.GetId(), Tags: i.GetRepoTags(), Size: i.GetSize(), Pinned: i.GetPinned()})
	}
	return out, nil
}

// ImagesInUse returns the IDs of the images of every container the
// runtime lists, in any state and whoever made it, as the kubelet counts
// them: an exited container may be restarted from its image.
func (r *Runtime) ImagesInUse(ctx context.Context) (map[string]bool, error) {
	cs, err := r.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	inUse := make(map[string]bool, len(cs))
	for _, c := range cs {
		// ImageId is new in CRI (1.30); older runtimes give the ID as the
		// ImageRef. Both count: keeping too much is the safe mistake.
		for _, id := range []string{c.GetImageId(), c.GetImageRef(), c.GetImage().GetImage()} {
			if id != "" {
				inUse[id] = true
			}
		}
	}
	return inUse, nil
}

// ImageFilesystem returns the first filesystem the runtime keeps images
// on, as the kubelet takes it.
func (r *Runtime) ImageFilesystem(ctx context.Context) (ImageFs, error) {
	resp, err := r.img.ImageFsInfo(ctx)
	if err != nil {
		return ImageFs{}, fmt.Errorf("runtime image filesystem info: %w", err)
	}
	fss := resp.GetImageFilesystems()
	if len(fss) == 0 {
		return ImageFs{}, errors.New("the runtime reports no image filesystem")
	}
	return ImageFs{Mountpoint: fss[0].GetFsId().GetMountpoint(), UsedBytes: fss[0].GetUsedBytes().GetValue()}, nil
}

// RemoveImage removes the image with the given ID and all its tags. An
// image already gone is not an error.
func (r *Runtime) RemoveImage(ctx context.Context, id string) error {
	if err := r.img.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: id}); err != nil && !isNotFound(err) {
		return fmt.Errorf("removing image %s: %w", id, err)
	}
	return nil
}

// SandboxImage returns the ID of the image the runtime makes pod
// sandboxes from, if its configuration names one that it holds, or "".
// containerd 1.6 does not always mark that image pinned (not when it was
// imported rather than pulled), yet no sandbox can start without it on a
// node that cannot pull it again: image garbage collection keeps it.
// containerd reports its configuration in the verbose status, under
// "config", as JSON with the key "sandboxImage".
func (r *Runtime) SandboxImage(ctx context.Context) (string, error) {
	resp, err := r.rt.Status(ctx, true)
	if err != nil {
		return "", fmt.Errorf("runtime status: %w", err)
	}
	raw, ok := resp.GetInfo()["config"]
	if !ok {
		return "", nil
	}
	var cfg struct {
		SandboxImage string `json:"sandboxImage"`
	}
	// A configuration of another shape names no sandbox image.
	if json.Unmarshal([]byte(raw), &cfg) != nil || cfg.SandboxImage == "" {
		return "", nil
	}
	st, err := r.img.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: cfg.SandboxImage}, false)
	if err != nil {
		return "", fmt.Errorf("status of the sandbox image %s: %w", cfg.SandboxImage, err)
	}
	return st.GetImage().GetId(), nil
}

// PrunePullRecords forgets the pulls recorded of images the runtime no
// longer holds (Options.PullRecords), as the kubelet does after removing
// images: an image pulled again later is decided by its new pull. It
// returns how many records went.
func (r *Runtime) PrunePullRecords(ctx context.Context) (int, error) {
	if r.opts.PullRecords == nil {
		return 0, nil
	}
	return r.opts.PullRecords.Prune(ctx, func(ctx context.Context) ([]string, error) {
		imgs, err := r.ListImages(ctx)
		ids := make([]string, len(imgs))
		for i, img := range imgs {
			ids[i] = img.ID
		}
		return ids, err
	})
}
