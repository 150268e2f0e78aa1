// Package imagegc removes the images a node no longer uses, with the
// kubelet's image garbage collection policy.
//
// Every Period the Manager lists the runtime's images and the images of
// every container the runtime holds (in any state: an exited container
// may restart from its image), and remembers in memory when it first saw
// each image and when it last saw one in use. Then:
//
//   - with MaxAge set, an unused image not used for longer than MaxAge is
//     removed, whatever the disk usage (not before the Manager itself has
//     run for MaxAge: it cannot know what was used before it started);
//   - when the image filesystem's usage (its capacity and free space from
//     statfs at the mountpoint the runtime reports) reaches
//     HighThresholdPercent, unused images are removed, least recently used
//     first, until the sizes of those removed add up to what brings usage
//     under LowThresholdPercent.
//
// An image in use, one the runtime pins, the runtime's sandbox image, and
// an image first seen less than MinAge ago (it may have just been pulled
// for a container about to start) are never removed.
//
// What could not be freed is reported as the kubelet reports it: a
// FreeDiskSpaceFailed event on the Node when usage stays above the low
// threshold, InvalidDiskCapacity when the filesystem has no capacity, and
// ImageGCFailed when a pass fails twice in a row; without a recorder
// (standalone), a log line says the same. Metrics count the images
// removed and the bytes freed, by reason, and the failures. After a pass
// that removed images, Options.AfterRemoval runs, as the kubelet's
// post-GC hooks: the agent prunes its image pull records there.
//
// Usage:
//
//	m, err := imagegc.New(imagegc.Options{Runtime: rt, HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute})
//	...
//	go m.Run(ctx)
package imagegc
