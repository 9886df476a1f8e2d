package wayland

// The interfaces, versions and opcodes antidrift uses, from wayland.xml,
// wlr-foreign-toplevel-management-unstable-v1.xml (wlr-protocols) and
// ext-idle-notify-v1.xml (wayland-protocols). Opcodes are the order of the
// requests or events within their interface in the XML, from 0.

// displayID is wl_display's fixed object id.
const displayID = 1

// wl_display
const (
	displaySync        = 0 // request: sync(new_id wl_callback)
	displayGetRegistry = 1 // request: get_registry(new_id wl_registry)
	displayError       = 0 // event: error(object, uint code, string message)
	displayDeleteID    = 1 // event: delete_id(uint id)
)

// wl_registry
const (
	registryBind         = 0 // request: bind(uint name, string interface, uint version, new_id)
	registryGlobal       = 0 // event: global(uint name, string interface, uint version)
	registryGlobalRemove = 1 // event: global_remove(uint name)
)

// wl_callback
const callbackDone = 0 // event: done(uint data)

// wl_seat: bound only to name the seat in other requests; version 1 has the
// fewest events (capabilities alone), none of which are needed.
const (
	seatInterface = "wl_seat"
	seatVersion   = 1
)

// zwlr_foreign_toplevel_manager_v1, version 3 (the parent event).
const (
	managerInterface = "zwlr_foreign_toplevel_manager_v1"
	managerVersion   = 3
	managerStop      = 0 // request: stop
	managerToplevel  = 0 // event: toplevel(new_id zwlr_foreign_toplevel_handle_v1)
	managerFinished  = 1 // event: finished
)

// zwlr_foreign_toplevel_handle_v1
const (
	handleSetMinimized   = 2 // request: set_minimized
	handleUnsetMinimized = 3 // request: unset_minimized
	handleActivate       = 4 // request: activate(object wl_seat)
	handleDestroy        = 7 // request: destroy

	handleTitle       = 0 // event: title(string)
	handleAppID       = 1 // event: app_id(string)
	handleOutputEnter = 2 // event: output_enter(object wl_output)
	handleOutputLeave = 3 // event: output_leave(object wl_output)
	handleState       = 4 // event: state(array of u32 state)
	handleDone        = 5 // event: done
	handleClosed      = 6 // event: closed
	handleParent      = 7 // event: parent(object handle or null), version 3
)

// zwlr_foreign_toplevel_handle_v1.state values.
const (
	stateMaximized  = 0
	stateMinimized  = 1
	stateActivated  = 2
	stateFullscreen = 3
)

// ext_idle_notifier_v1 and ext_idle_notification_v1, version 1.
const (
	notifierInterface           = "ext_idle_notifier_v1"
	notifierVersion             = 1
	notifierGetIdleNotification = 1 // request: get_idle_notification(new_id, uint timeout_ms, object wl_seat)
	notificationIdled           = 0 // event: idled
	notificationResumed         = 1 // event: resumed
)

// serverIDMin is the first object id in the range the compositor allocates
// from (objects it creates, such as toplevel handles).
const serverIDMin = 0xff000000
