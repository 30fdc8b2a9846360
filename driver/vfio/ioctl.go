package vfio

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The VFIO ioctls and structures of Linux 6.1's include/uapi/linux/vfio.h,
// which golang.org/x/sys/unix does not define. The header defines every
// request with _IO(VFIO_TYPE, VFIO_BASE + n): no direction and no size are
// encoded ("the structure length (argsz) and flags [are embedded] into
// structures passed between kernel and userspace", the header's comment),
// so each number is (VFIO_TYPE << 8) | (VFIO_BASE + n), with VFIO_TYPE ';'
// (0x3b) and VFIO_BASE 100. ioctl_test.go checks them against the values
// written down from the 6.1 header.
const (
	vfioType = ';' // VFIO_TYPE
	vfioBase = 100 // VFIO_BASE
)

// ioc is _IO(type, nr) of include/uapi/asm-generic/ioctl.h: direction
// _IOC_NONE (0) and size 0, so only the type (bits 8..15) and the number
// (bits 0..7) are set.
func ioc(typ, nr uintptr) uintptr { return typ<<8 | nr }

var (
	// On the container (/dev/vfio/vfio).
	ioctlGetAPIVersion = ioc(vfioType, vfioBase+0)  // VFIO_GET_API_VERSION
	ioctlCheckExt      = ioc(vfioType, vfioBase+1)  // VFIO_CHECK_EXTENSION
	ioctlSetIOMMU      = ioc(vfioType, vfioBase+2)  // VFIO_SET_IOMMU
	ioctlIOMMUGetInfo  = ioc(vfioType, vfioBase+12) // VFIO_IOMMU_GET_INFO
	ioctlIOMMUMapDMA   = ioc(vfioType, vfioBase+13) // VFIO_IOMMU_MAP_DMA
	ioctlIOMMUUnmapDMA = ioc(vfioType, vfioBase+14) // VFIO_IOMMU_UNMAP_DMA

	// On a group (/dev/vfio/N).
	ioctlGroupGetStatus    = ioc(vfioType, vfioBase+3) // VFIO_GROUP_GET_STATUS
	ioctlGroupSetContainer = ioc(vfioType, vfioBase+4) // VFIO_GROUP_SET_CONTAINER
	ioctlGroupUnsetCont    = ioc(vfioType, vfioBase+5) // VFIO_GROUP_UNSET_CONTAINER
	ioctlGroupGetDeviceFD  = ioc(vfioType, vfioBase+6) // VFIO_GROUP_GET_DEVICE_FD

	// On a device fd.
	ioctlDeviceGetInfo       = ioc(vfioType, vfioBase+7)  // VFIO_DEVICE_GET_INFO
	ioctlDeviceGetRegionInfo = ioc(vfioType, vfioBase+8)  // VFIO_DEVICE_GET_REGION_INFO
	ioctlDeviceGetIRQInfo    = ioc(vfioType, vfioBase+9)  // VFIO_DEVICE_GET_IRQ_INFO
	ioctlDeviceSetIRQs       = ioc(vfioType, vfioBase+10) // VFIO_DEVICE_SET_IRQS
	ioctlDeviceReset         = ioc(vfioType, vfioBase+11) // VFIO_DEVICE_RESET
)

const (
	apiVersion = 0 // VFIO_API_VERSION
	// typeIOMMUType1v2 is VFIO_TYPE1v2_IOMMU, the extension and IOMMU
	// model this driver asks for (type 1 with the v2 unmap semantics).
	typeIOMMUType1v2 = 3

	groupFlagsViable = 1 << 0 // VFIO_GROUP_FLAGS_VIABLE

	deviceFlagsReset = 1 << 0 // VFIO_DEVICE_FLAGS_RESET
	deviceFlagsPCI   = 1 << 1 // VFIO_DEVICE_FLAGS_PCI

	regionFlagRead  = 1 << 0 // VFIO_REGION_INFO_FLAG_READ
	regionFlagWrite = 1 << 1 // VFIO_REGION_INFO_FLAG_WRITE
	regionFlagMmap  = 1 << 2 // VFIO_REGION_INFO_FLAG_MMAP

	// The vfio-pci region indexes (enum in vfio.h): BAR0..BAR5, then ROM,
	// then the config space.
	pciConfigRegionIndex = 7 // VFIO_PCI_CONFIG_REGION_INDEX

	// The vfio-pci interrupt indexes.
	pciINTxIRQIndex = 0 // VFIO_PCI_INTX_IRQ_INDEX
	pciMSIIRQIndex  = 1 // VFIO_PCI_MSI_IRQ_INDEX
	pciMSIXIRQIndex = 2 // VFIO_PCI_MSIX_IRQ_INDEX

	irqInfoEventfd = 1 << 0 // VFIO_IRQ_INFO_EVENTFD

	irqSetDataNone     = 1 << 0 // VFIO_IRQ_SET_DATA_NONE
	irqSetDataEventfd  = 1 << 2 // VFIO_IRQ_SET_DATA_EVENTFD
	irqSetActionUnmask = 1 << 4 // VFIO_IRQ_SET_ACTION_UNMASK
	irqSetActionTrig   = 1 << 5 // VFIO_IRQ_SET_ACTION_TRIGGER

	dmaMapFlagRead  = 1 << 0 // VFIO_DMA_MAP_FLAG_READ
	dmaMapFlagWrite = 1 << 1 // VFIO_DMA_MAP_FLAG_WRITE

	iommuInfoCaps       = 1 << 1 // VFIO_IOMMU_INFO_CAPS
	iommuCapIOVARange   = 1      // VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE
	pciCommandOffset    = 0x04   // the PCI command register in config space
	pciCommandMemory    = 1 << 1 // memory space enable
	pciCommandBusMaster = 1 << 2 // bus master enable
)

// groupStatus is struct vfio_group_status.
type groupStatus struct {
	Argsz uint32
	Flags uint32
}

// deviceInfo is struct vfio_device_info.
type deviceInfo struct {
	Argsz      uint32
	Flags      uint32
	NumRegions uint32
	NumIRQs    uint32
	CapOffset  uint32
}

// regionInfo is struct vfio_region_info.
type regionInfo struct {
	Argsz     uint32
	Flags     uint32
	Index     uint32
	CapOffset uint32
	Size      uint64
	Offset    uint64
}

// irqInfo is struct vfio_irq_info.
type irqInfo struct {
	Argsz uint32
	Flags uint32
	Index uint32
	Count uint32
}

// irqSetHeader is struct vfio_irq_set without its data[] tail.
type irqSetHeader struct {
	Argsz uint32
	Flags uint32
	Index uint32
	Start uint32
	Count uint32
}

// dmaMap is struct vfio_iommu_type1_dma_map.
type dmaMap struct {
	Argsz uint32
	Flags uint32
	Vaddr uint64
	IOVA  uint64
	Size  uint64
}

// dmaUnmap is struct vfio_iommu_type1_dma_unmap (without its data[] tail).
type dmaUnmap struct {
	Argsz uint32
	Flags uint32
	IOVA  uint64
	Size  uint64
}

// iommuInfo is struct vfio_iommu_type1_info; a capability chain follows it
// in the buffer when the caller's argsz leaves room.
type iommuInfo struct {
	Argsz       uint32
	Flags       uint32
	IOVAPgsizes uint64
	CapOffset   uint32
	_           uint32
}

// ioctl runs one VFIO ioctl whose argument is a pointer (or nil).
func ioctl(fd int, req uintptr, arg unsafe.Pointer) (uintptr, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	if errno != 0 {
		return r, errno
	}
	return r, nil
}

// ioctlInt runs one VFIO ioctl whose argument is an integer.
func ioctlInt(fd int, req uintptr, arg uintptr) (uintptr, error) {
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, arg)
	if errno != 0 {
		return r, errno
	}
	return r, nil
}

// ioctlName names a request for error messages.
func ioctlName(req uintptr) string {
	names := map[uintptr]string{
		ioctlGetAPIVersion: "VFIO_GET_API_VERSION", ioctlCheckExt: "VFIO_CHECK_EXTENSION",
		ioctlSetIOMMU: "VFIO_SET_IOMMU", ioctlIOMMUGetInfo: "VFIO_IOMMU_GET_INFO",
		ioctlIOMMUMapDMA: "VFIO_IOMMU_MAP_DMA", ioctlIOMMUUnmapDMA: "VFIO_IOMMU_UNMAP_DMA",
		ioctlGroupGetStatus: "VFIO_GROUP_GET_STATUS", ioctlGroupSetContainer: "VFIO_GROUP_SET_CONTAINER",
		ioctlGroupUnsetCont: "VFIO_GROUP_UNSET_CONTAINER", ioctlGroupGetDeviceFD: "VFIO_GROUP_GET_DEVICE_FD",
		ioctlDeviceGetInfo: "VFIO_DEVICE_GET_INFO", ioctlDeviceGetRegionInfo: "VFIO_DEVICE_GET_REGION_INFO",
		ioctlDeviceGetIRQInfo: "VFIO_DEVICE_GET_IRQ_INFO", ioctlDeviceSetIRQs: "VFIO_DEVICE_SET_IRQS",
		ioctlDeviceReset: "VFIO_DEVICE_RESET",
	}
	if n, ok := names[req]; ok {
		return n
	}
	return fmt.Sprintf("ioctl %#x", req)
}
