package vfio

import (
	"testing"
	"unsafe"
)

// The request numbers as Linux 6.1's include/uapi/linux/vfio.h gives them
// (each _IO(';', 100 + n), worked out by hand from the header's
// definitions: ';' is 0x3b), and the structure sizes the kernel's minsz
// checks read (offsetofend of the last fixed field, padded as the C
// compiler pads them on amd64).
func TestIoctlNumbers(t *testing.T) {
	for _, c := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"VFIO_GET_API_VERSION", ioctlGetAPIVersion, 0x3b64},
		{"VFIO_CHECK_EXTENSION", ioctlCheckExt, 0x3b65},
		{"VFIO_SET_IOMMU", ioctlSetIOMMU, 0x3b66},
		{"VFIO_GROUP_GET_STATUS", ioctlGroupGetStatus, 0x3b67},
		{"VFIO_GROUP_SET_CONTAINER", ioctlGroupSetContainer, 0x3b68},
		{"VFIO_GROUP_UNSET_CONTAINER", ioctlGroupUnsetCont, 0x3b69},
		{"VFIO_GROUP_GET_DEVICE_FD", ioctlGroupGetDeviceFD, 0x3b6a},
		{"VFIO_DEVICE_GET_INFO", ioctlDeviceGetInfo, 0x3b6b},
		{"VFIO_DEVICE_GET_REGION_INFO", ioctlDeviceGetRegionInfo, 0x3b6c},
		{"VFIO_DEVICE_GET_IRQ_INFO", ioctlDeviceGetIRQInfo, 0x3b6d},
		{"VFIO_DEVICE_SET_IRQS", ioctlDeviceSetIRQs, 0x3b6e},
		{"VFIO_DEVICE_RESET", ioctlDeviceReset, 0x3b6f},
		{"VFIO_IOMMU_GET_INFO", ioctlIOMMUGetInfo, 0x3b70},
		{"VFIO_IOMMU_MAP_DMA", ioctlIOMMUMapDMA, 0x3b71},
		{"VFIO_IOMMU_UNMAP_DMA", ioctlIOMMUUnmapDMA, 0x3b72},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x (6.1 vfio.h)", c.name, c.got, c.want)
		}
		if n := ioctlName(c.got); n != c.name {
			t.Errorf("ioctlName(%#x) = %q, want %q", c.got, n, c.name)
		}
	}
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"struct vfio_group_status", unsafe.Sizeof(groupStatus{}), 8},
		{"struct vfio_device_info", unsafe.Sizeof(deviceInfo{}), 20},
		{"struct vfio_region_info", unsafe.Sizeof(regionInfo{}), 32},
		{"struct vfio_irq_info", unsafe.Sizeof(irqInfo{}), 16},
		{"struct vfio_irq_set (fixed part)", unsafe.Sizeof(irqSetHeader{}), 20},
		{"struct vfio_iommu_type1_dma_map", unsafe.Sizeof(dmaMap{}), 32},
		{"struct vfio_iommu_type1_dma_unmap", unsafe.Sizeof(dmaUnmap{}), 24},
		{"struct vfio_iommu_type1_info", unsafe.Sizeof(iommuInfo{}), 24},
		{"vfio_region_info.offset", unsafe.Offsetof(regionInfo{}.Offset), 24},
		{"vfio_iommu_type1_dma_map.iova", unsafe.Offsetof(dmaMap{}.IOVA), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d octets, want %d", c.name, c.got, c.want)
		}
	}
}
