use std::process::Command;
#[test]
fn exp() {
    let big: Vec<u8> = vec![1u8; 300 << 20];
    let s: u64 = big.iter().step_by(4096).map(|&b| b as u64).sum();
    eprintln!("touched {s}");
    drop(big);
    let child = Command::new("/bin/true").spawn().unwrap();
    let pid = child.id() as i32;
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    eprintln!("child maxrss {} KiB", ru.ru_maxrss);
    let child = Command::new("/bin/sh").arg("-c").arg("/bin/true; /bin/true").spawn().unwrap();
    let pid = child.id() as i32;
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    eprintln!("sh child maxrss {} KiB", ru.ru_maxrss);
    let mut me: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut me) };
    eprintln!("self maxrss {} KiB", me.ru_maxrss);
}
